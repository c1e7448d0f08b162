/* Lists the registry of the kernel library built by the stand-in tilec. */
#include <stdio.h>
#include <string.h>

#include "my_kernels.h"
#include "my_kernels_launch.h"

#if !defined(FAKE_HEADER_a) || !defined(FAKE_HEADER_b_2)
#error "my_kernels_launch.h does not include every module's header"
#endif

int main(void)
{
	int n = 0;

	for (; my_kernels_modules[n]; n++)
		printf("%s: %s\n", my_kernels_modules[n]->name, my_kernels_modules[n]->ptx);
	if (n != 2 || my_kernels_find("a") != &tile_module_a ||
	    my_kernels_find("b_2") != &tile_module_b_2 || my_kernels_find("c") != NULL ||
	    strstr(tile_module_a.meta, "module a") == NULL)
		return 1;
	return 0;
}
