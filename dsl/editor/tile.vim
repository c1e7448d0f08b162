" Vim syntax file for the tile language of tilec (dsl/reference.md).
" Install: copy to ~/.vim/syntax/tile.vim and ftdetect/tile.vim to ~/.vim/ftdetect/
" (Neovim: ~/.config/nvim/). The word lists are checked against compiler/lexer.l and
" compiler/builtins.def by tests/editor/check_syntax.py.
if exists("b:current_syntax")
  finish
endif

syn keyword tileInclude     import
syn keyword tileConditional if else
syn keyword tileRepeat      for in step while unroll nounroll nohoist pipeline
syn keyword tileStatement   break continue return
syn keyword tileDecl        const fn kernel let var type
syn keyword tileStorage     shared global tma box swizzle overlay mbarrier frag
syn keyword tileLaunch      grid threads ctas_per_sm cluster
syn keyword tileRole        role warpgroup regs
syn keyword tileOperator    cast
syn keyword tileType        bool i32 i64 f16 bf16 f32 tf32
syn keyword tileBoolean     true false

syn keyword tileBuiltinVar  thread_id block_id block_dim grid_dim lane_id warp_id wg_rank cluster_rank
syn keyword tileBuiltinConst inf
syn keyword tileBuiltinFn   exp2 log2 exp log rcp sqrt rsqrt fma min max abs where cdiv
syn keyword tileBuiltinFn   barrier shfl_xor shfl_down shfl_up shfl_idx elect_one sync signal sync_warp
syn keyword tileBuiltinFn   tma_load tma_store tma_store_wait tma_store_wait_read tma_prefetch
syn keyword tileBuiltinFn   arrive arrive_expect wait fence_async cluster_sync cluster_arrive cluster_wait cluster_load
syn keyword tileBuiltinFn   load_acquire store_release atomic_add fence_proxy_global nanosleep
syn keyword tileBuiltinFn   launch_dependents wait_prerequisite_grids
syn keyword tileBuiltinFn   mma mma_async mma_wait frag_store frag_load load
syn keyword tileBuiltinFn   rowmax rowsum rows cols frag_cols frag_join col_load row_load col_store row_store transpose

syn match  tileNumber  "\<\d\+\>"
syn match  tileNumber  "\<0[xX]\x\+\>"
syn match  tileFloat   "\<\d\+\.\d\+\([eE][+-]\=\d\+\)\=\>"
syn match  tileFloat   "\<\d\+[eE][+-]\=\d\+\>"
syn region tileString  start=+"+ end=+"+ end=+$+ oneline
syn match  tileRangeOp "\.\.\|+:\|->"
syn match  tileFuncName "\%(\<\%(fn\|kernel\)\s\+\)\@<=\h\w*"

syn keyword tileTodo contained TODO FIXME XXX NOTE
syn match  tileComment "//.*$" contains=tileTodo,@Spell
syn region tileComment start="/\*" end="\*/" contains=tileTodo,@Spell

hi def link tileInclude      Include
hi def link tileConditional  Conditional
hi def link tileRepeat       Repeat
hi def link tileStatement    Statement
hi def link tileDecl         Keyword
hi def link tileStorage      StorageClass
hi def link tileLaunch       Keyword
hi def link tileRole         Keyword
hi def link tileOperator     Operator
hi def link tileType         Type
hi def link tileBoolean      Boolean
hi def link tileBuiltinVar   Identifier
hi def link tileBuiltinConst Constant
hi def link tileBuiltinFn    Function
hi def link tileNumber       Number
hi def link tileFloat        Float
hi def link tileString       String
hi def link tileRangeOp      Operator
hi def link tileFuncName     Function
hi def link tileTodo         Todo
hi def link tileComment      Comment

let b:current_syntax = "tile"
