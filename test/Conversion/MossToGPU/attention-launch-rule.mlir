// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu -canonicalize | FileCheck %s

// The host code's copy of the attention launch rule (docs/kernel-abi.md) folds
// to the grid, block, dynamic shared memory, splits and key groups of
// moss::config::deriveAttentionLaunch for static shapes: the same cases as
// AttentionLaunchTest (unittests/Compiler/AttentionRuleMirrorTest.cpp checks
// the same over 960 shapes), so the C++ rule and its IR mirror cannot drift
// apart.
// The kernel is the one for the rule's key-group count, one-pass or (splits >
// 1) split, whose splits are one cluster (1, 1, splits) and need no
// workspace; the split count follows the flags, then null tensor maps (host
// IR launches only the cp.async functions): the rule without TMA copies
// (AttentionTmaMode::off), as the runtime launches where k or v does not
// encode as a tensor map.

// decode, 12 CTAs: two key groups, one trip of two tiles per split, four
// splits; two copy warps fill each CTA to four warps.
// CHECK-LABEL: func.func @b1_h12_t1_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2_split clusters in (%c1, %c1, %c4) blocks in (%c12, %c1, %c4) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c92688_i32
// CHECK-SAME: %c4_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b1_h12_t1_s400(%q: tensor<1x12x1x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x1x400xi1>) -> tensor<1x12x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x1x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x1x400xi1> -> tensor<1x12x1x64xbf16>
  return %o : tensor<1x12x1x64xbf16>
}

// -----

// two key tiles: two groups, one trip, no split; two copy warps.
// CHECK-LABEL: func.func @b1_h20_t1_s125(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2 blocks in (%c20, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c74240_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b1_h20_t1_s125(%q: tensor<1x20x1x64xbf16>, %k: tensor<1x20x125x64xbf16>, %v: tensor<1x20x125x64xbf16>, %m: tensor<1x1x1x125xi1>) -> tensor<1x20x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x20x1x64xbf16>, tensor<1x20x125x64xbf16>, tensor<1x20x125x64xbf16>, tensor<1x1x1x125xi1> -> tensor<1x20x1x64xbf16>
  return %o : tensor<1x20x1x64xbf16>
}

// -----

// 160 CTAs of two groups: past one CTA an SM, no copy warps.
// CHECK-LABEL: func.func @b8_h20_t1_s125(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2 blocks in (%c160, %c1, %c1) threads in (%c64, %c1, %c1) dynamic_shared_memory_size %c74240_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b8_h20_t1_s125(%q: tensor<8x20x1x64xbf16>, %k: tensor<8x20x125x64xbf16>, %v: tensor<8x20x125x64xbf16>, %m: tensor<8x1x1x125xi1>) -> tensor<8x20x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<8x20x1x64xbf16>, tensor<8x20x125x64xbf16>, tensor<8x20x125x64xbf16>, tensor<8x1x1x125xi1> -> tensor<8x20x1x64xbf16>
  return %o : tensor<8x20x1x64xbf16>
}

// -----

// three key tiles: three groups (one stage) and one copy warp; Q rows and
// the merge area only for the compute warps.
// CHECK-LABEL: func.func @b1_h1_t1_s190(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g3 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c64512_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b1_h1_t1_s190(%q: tensor<1x1x1x64xbf16>, %k: tensor<1x1x190x64xbf16>, %v: tensor<1x1x190x64xbf16>, %m: tensor<1x1x1x190xi1>) -> tensor<1x1x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x1x1x64xbf16>, tensor<1x1x190x64xbf16>, tensor<1x1x190x64xbf16>, tensor<1x1x1x190xi1> -> tensor<1x1x1x64xbf16>
  return %o : tensor<1x1x1x64xbf16>
}

// -----

// decode, 48 CTAs: four splits of two groups would take 192 CTAs, so four
// key groups, one trip of four tiles per split, two splits.
// CHECK-LABEL: func.func @b4_h12_t1_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g4_split clusters in (%c1, %c1, %c2) blocks in (%c48, %c1, %c2) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c96784_i32
// CHECK-SAME: %c2_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b4_h12_t1_s400(%q: tensor<4x12x1x64xbf16>, %k: tensor<4x12x400x64xbf16>, %v: tensor<4x12x400x64xbf16>, %m: tensor<4x1x1x400xi1>) -> tensor<4x12x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<4x12x1x64xbf16>, tensor<4x12x400x64xbf16>, tensor<4x12x400x64xbf16>, tensor<4x1x1x400xi1> -> tensor<4x12x1x64xbf16>
  return %o : tensor<4x12x1x64xbf16>
}

// -----

// 48 CTAs of 2 row warps over 7 tiles: two groups, two trips per split.
// CHECK-LABEL: func.func @b4_h12_t32_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2_split clusters in (%c1, %c1, %c2) blocks in (%c48, %c1, %c2) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c101392_i32
// CHECK-SAME: %c2_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b4_h12_t32_s400(%q: tensor<4x12x32x64xbf16>, %k: tensor<4x12x400x64xbf16>, %v: tensor<4x12x400x64xbf16>, %m: tensor<4x1x32x400xi1>) -> tensor<4x12x32x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<4x12x32x64xbf16>, tensor<4x12x400x64xbf16>, tensor<4x12x400x64xbf16>, tensor<4x1x32x400xi1> -> tensor<4x12x32x64xbf16>
  return %o : tensor<4x12x32x64xbf16>
}

// -----

// 12 CTAs of 2 row warps over 7 tiles: one group, two tiles per split.
// CHECK-LABEL: func.func @b1_h12_t32_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g1_split clusters in (%c1, %c1, %c4) blocks in (%c12, %c1, %c4) threads in (%c64, %c1, %c1) dynamic_shared_memory_size %c73744_i32
// CHECK-SAME: %c4_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b1_h12_t32_s400(%q: tensor<1x12x32x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x32x400xi1>) -> tensor<1x12x32x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x32x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x32x400xi1> -> tensor<1x12x32x64xbf16>
  return %o : tensor<1x12x32x64xbf16>
}

// -----

// 12 CTAs of 2 row warps over 4 tiles: two groups would leave two trips, so
// one group in four splits of one tile each.
// CHECK-LABEL: func.func @b1_h12_t32_s250(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g1_split clusters in (%c1, %c1, %c4) blocks in (%c12, %c1, %c4) threads in (%c64, %c1, %c1) dynamic_shared_memory_size %c73744_i32
// CHECK-SAME: %c4_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b1_h12_t32_s250(%q: tensor<1x12x32x64xbf16>, %k: tensor<1x12x250x64xbf16>, %v: tensor<1x12x250x64xbf16>, %m: tensor<1x1x32x250xi1>) -> tensor<1x12x32x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x32x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x1x32x250xi1> -> tensor<1x12x32x64xbf16>
  return %o : tensor<1x12x32x64xbf16>
}

// -----

// 96 CTAs of 2 row warps x 2 groups: slots / (4 ctas) = 1, no split.
// CHECK-LABEL: func.func @b8_h12_t32_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2 blocks in (%c96, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c82944_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b8_h12_t32_s400(%q: tensor<8x12x32x64xbf16>, %k: tensor<8x12x400x64xbf16>, %v: tensor<8x12x400x64xbf16>, %m: tensor<8x1x32x400xi1>) -> tensor<8x12x32x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<8x12x32x64xbf16>, tensor<8x12x400x64xbf16>, tensor<8x12x400x64xbf16>, tensor<8x1x32x400xi1> -> tensor<8x12x32x64xbf16>
  return %o : tensor<8x12x32x64xbf16>
}

// -----

// four tiles, 2 groups: two splits of one trip (two row warps split down to
// one trip, and 96 CTAs keep one an SM).
// CHECK-LABEL: func.func @b4_h12_t32_s250(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2_split clusters in (%c1, %c1, %c2) blocks in (%c48, %c1, %c2) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c101392_i32
// CHECK-SAME: %c2_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b4_h12_t32_s250(%q: tensor<4x12x32x64xbf16>, %k: tensor<4x12x250x64xbf16>, %v: tensor<4x12x250x64xbf16>, %m: tensor<4x1x32x250xi1>) -> tensor<4x12x32x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<4x12x32x64xbf16>, tensor<4x12x250x64xbf16>, tensor<4x12x250x64xbf16>, tensor<4x1x32x250xi1> -> tensor<4x12x32x64xbf16>
  return %o : tensor<4x12x32x64xbf16>
}

// -----

// 192 CTAs of 2 row warps x 2 groups: slots / (4 ctas) = 0, no split.
// CHECK-LABEL: func.func @b16_h12_t32_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2 blocks in (%c192, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c82944_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b16_h12_t32_s400(%q: tensor<16x12x32x64xbf16>, %k: tensor<16x12x400x64xbf16>, %v: tensor<16x12x400x64xbf16>, %m: tensor<16x1x32x400xi1>) -> tensor<16x12x32x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<16x12x32x64xbf16>, tensor<16x12x400x64xbf16>, tensor<16x12x400x64xbf16>, tensor<16x1x32x400xi1> -> tensor<16x12x32x64xbf16>
  return %o : tensor<16x12x32x64xbf16>
}

// -----

// 12 CTAs of 4 groups, one trip each: with tensor maps the runtime runs
// g4_tma; host IR the cp.async g4, without the trip mbarrier's 16 bytes.
// CHECK-LABEL: func.func @b1_h12_t1_s250(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g4 blocks in (%c12, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c87552_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b1_h12_t1_s250(%q: tensor<1x12x1x64xbf16>, %k: tensor<1x12x250x64xbf16>, %v: tensor<1x12x250x64xbf16>, %m: tensor<1x1x1x250xi1>) -> tensor<1x12x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x1x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x1x1x250xi1> -> tensor<1x12x1x64xbf16>
  return %o : tensor<1x12x1x64xbf16>
}

// -----

// A decode step in 192 CTAs (past one an SM): two groups of two trips (the
// runtime copies them by TMA), no copy warps.
// CHECK-LABEL: func.func @b16_h12_t1_s250(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2 blocks in (%c192, %c1, %c1) threads in (%c64, %c1, %c1) dynamic_shared_memory_size %c74240_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b16_h12_t1_s250(%q: tensor<16x12x1x64xbf16>, %k: tensor<16x12x250x64xbf16>, %v: tensor<16x12x250x64xbf16>, %m: tensor<16x1x1x250xi1>) -> tensor<16x12x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<16x12x1x64xbf16>, tensor<16x12x250x64xbf16>, tensor<16x12x250x64xbf16>, tensor<16x1x1x250xi1> -> tensor<16x12x1x64xbf16>
  return %o : tensor<16x12x1x64xbf16>
}

// -----

// T = 8 in the same grid keeps four groups (one stage), two trips: no
// split, and not copied by TMA.
// CHECK-LABEL: func.func @b16_h12_t8_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g4 blocks in (%c192, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c87552_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b16_h12_t8_s400(%q: tensor<16x12x8x64xbf16>, %k: tensor<16x12x400x64xbf16>, %v: tensor<16x12x400x64xbf16>, %m: tensor<16x1x8x400xi1>) -> tensor<16x12x8x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<16x12x8x64xbf16>, tensor<16x12x400x64xbf16>, tensor<16x12x400x64xbf16>, tensor<16x1x8x400xi1> -> tensor<16x12x8x64xbf16>
  return %o : tensor<16x12x8x64xbf16>
}

// -----

// The same with S = 400: four trips of two groups, no split.
// CHECK-LABEL: func.func @b16_h12_t1_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2 blocks in (%c192, %c1, %c1) threads in (%c64, %c1, %c1) dynamic_shared_memory_size %c74240_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b16_h12_t1_s400(%q: tensor<16x12x1x64xbf16>, %k: tensor<16x12x400x64xbf16>, %v: tensor<16x12x400x64xbf16>, %m: tensor<16x1x1x400xi1>) -> tensor<16x12x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<16x12x1x64xbf16>, tensor<16x12x400x64xbf16>, tensor<16x12x400x64xbf16>, tensor<16x1x1x400xi1> -> tensor<16x12x1x64xbf16>
  return %o : tensor<16x12x1x64xbf16>
}

// -----

// 4 row warps, 192 CTAs: one group, no split.
// CHECK-LABEL: func.func @b4_h12_t240_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g1 blocks in (%c48, %c4, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c40960_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b4_h12_t240_s400(%q: tensor<4x12x240x64xbf16>, %k: tensor<4x12x400x64xbf16>, %v: tensor<4x12x400x64xbf16>, %m: tensor<4x1x240x400xi1>) -> tensor<4x12x240x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<4x12x240x64xbf16>, tensor<4x12x400x64xbf16>, tensor<4x12x400x64xbf16>, tensor<4x1x240x400xi1> -> tensor<4x12x240x64xbf16>
  return %o : tensor<4x12x240x64xbf16>
}

// -----

// the longest chunk: one pass.
// CHECK-LABEL: func.func @b16_h12_t480_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g1 blocks in (%c192, %c8, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c40960_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b16_h12_t480_s400(%q: tensor<16x12x480x64xbf16>, %k: tensor<16x12x400x64xbf16>, %v: tensor<16x12x400x64xbf16>, %m: tensor<16x1x480x400xi1>) -> tensor<16x12x480x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<16x12x480x64xbf16>, tensor<16x12x400x64xbf16>, tensor<16x12x400x64xbf16>, tensor<16x1x480x400xi1> -> tensor<16x12x480x64xbf16>
  return %o : tensor<16x12x480x64xbf16>
}

// -----

// 320 CTAs of one row warp: past 264, but two groups' 2-warp CTAs fit three
// an SM; no split, no copy warps.
// CHECK-LABEL: func.func @b16_h20_t1_s125(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2 blocks in (%c320, %c1, %c1) threads in (%c64, %c1, %c1) dynamic_shared_memory_size %c74240_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b16_h20_t1_s125(%q: tensor<16x20x1x64xbf16>, %k: tensor<16x20x125x64xbf16>, %v: tensor<16x20x125x64xbf16>, %m: tensor<16x1x1x125xi1>) -> tensor<16x20x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<16x20x1x64xbf16>, tensor<16x20x125x64xbf16>, tensor<16x20x125x64xbf16>, tensor<16x1x1x125xi1> -> tensor<16x20x1x64xbf16>
  return %o : tensor<16x20x1x64xbf16>
}

// -----

// 400 CTAs: past three 2-warp CTAs an SM, one group.
// CHECK-LABEL: func.func @b20_h20_t1_s125(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g1 blocks in (%c400, %c1, %c1) threads in (%c32, %c1, %c1) dynamic_shared_memory_size %c34816_i32
// CHECK-SAME: %c1_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b20_h20_t1_s125(%q: tensor<20x20x1x64xbf16>, %k: tensor<20x20x125x64xbf16>, %v: tensor<20x20x125x64xbf16>, %m: tensor<20x1x1x125xi1>) -> tensor<20x20x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<20x20x1x64xbf16>, tensor<20x20x125x64xbf16>, tensor<20x20x125x64xbf16>, tensor<20x1x1x125xi1> -> tensor<20x20x1x64xbf16>
  return %o : tensor<20x20x1x64xbf16>
}

// -----

// 48 CTAs of four row warps over 7 tiles: half the slots would allow four
// splits, one CTA an SM allows two.
// CHECK-LABEL: func.func @b1_h12_t240_s400(
// CHECK-NOT: xf32>
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g1_split clusters in (%c1, %c1, %c2) blocks in (%c12, %c4, %c2) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c77840_i32
// CHECK-SAME: %c2_i32 : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
func.func @b1_h12_t240_s400(%q: tensor<1x12x240x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x240x400xi1>) -> tensor<1x12x240x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x240x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x240x400xi1> -> tensor<1x12x240x64xbf16>
  return %o : tensor<1x12x240x64xbf16>
}
