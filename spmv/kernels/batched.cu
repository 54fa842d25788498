// Batched sweeps: B sources per launch as n x B vertex-major blocks (see batched.cuh).
// Each kernel name carries the width of its level type: 16 (short, depths below 32766) or
// 32 (int, the fallback the host switches to when a batch goes deeper).
//
//   bcb_sccsc*   thread per (vertex, source): every level is the dense masked pull
//                F<¬Σ> = F A, and the backward pull over every unit (the batched scCSC)
//   bcb_vecsc*   warp per (vertex, 32-source chunk), lane per source, with frontier units:
//                push from small frontiers, pull from large ones; backward only over the
//                units holding the level (the batched veCSC)
//   bcb_sccooc*  warp per (stored edge, 32-source chunk), atomics into the target, in both
//                directions (the batched scCOOC)
//
// Each with VertexSums (vertex BC), and with EdgeSums (name ending in _edge: edge BC, the
// vertex sums too).
#include "batched.cuh"

TBCB_KERNEL(bcb_sccsc16, DensePull, VertexSums, short)
TBCB_KERNEL(bcb_sccsc32, DensePull, VertexSums, int)
TBCB_KERNEL(bcb_vecsc16, FrontierPushPull, VertexSums, short)
TBCB_KERNEL(bcb_vecsc32, FrontierPushPull, VertexSums, int)
TBCB_KERNEL(bcb_sccooc16, EdgeParallel, VertexSums, short)
TBCB_KERNEL(bcb_sccooc32, EdgeParallel, VertexSums, int)
TBCB_KERNEL(bcb_sccsc16_edge, DensePull, EdgeSums, short)
TBCB_KERNEL(bcb_sccsc32_edge, DensePull, EdgeSums, int)
TBCB_KERNEL(bcb_vecsc16_edge, FrontierPushPull, EdgeSums, short)
TBCB_KERNEL(bcb_vecsc32_edge, FrontierPushPull, EdgeSums, int)
TBCB_KERNEL(bcb_sccooc16_edge, EdgeParallel, EdgeSums, short)
TBCB_KERNEL(bcb_sccooc32_edge, EdgeParallel, EdgeSums, int)
