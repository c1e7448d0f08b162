" .tile files are the tile language (dsl/editor/tile.vim)
autocmd BufRead,BufNewFile *.tile setfiletype tile
