/*
 * tile_limits.h: limits that tilec and libtilert must agree on. tilec refuses
 * source the runtime could not load, so both sides include this one header
 * (installed with tile.h).
 */
#ifndef TILE_LIMITS_H
#define TILE_LIMITS_H

/* Characters of a name (identifier, kernel, parameter, module) at most. The
 * runtime's metadata parser keeps names in char[TILE_MAX_NAME_LEN + 1]. */
#define TILE_MAX_NAME_LEN 127
#define TILE_MAX_NAME_STR "127" /* the same, for messages */

#endif
