; Known kernels written as LLVM IR (the form Ember's code generator produces), compiled to PTX by
; llc-19 at build time for sm_80 and sm_90. Same semantics as the NVRTC versions in
; known_kernels.cu, so tests/virtual_gpu/llvm_kernels_test.cc checks them against the same
; references.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare void @llvm.nvvm.barrier0()
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.up.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1)
declare float @llvm.fma.f32(float, float, float)

; y[i] = fma(a, x[i], y[i]) over a grid-stride loop.
define void @grid_stride_saxpy(float %a, ptr addrspace(1) %x, ptr addrspace(1) %y, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nctaid = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %base = mul i32 %ctaid, %ntid
  %start = add i32 %base, %tid
  %step = mul i32 %nctaid, %ntid
  %in0 = icmp slt i32 %start, %n
  br i1 %in0, label %loop, label %done
loop:
  %i = phi i32 [ %start, %entry ], [ %next, %loop ]
  %px = getelementptr inbounds float, ptr addrspace(1) %x, i32 %i
  %py = getelementptr inbounds float, ptr addrspace(1) %y, i32 %i
  %vx = load float, ptr addrspace(1) %px, align 4
  %vy = load float, ptr addrspace(1) %py, align 4
  %r = call float @llvm.fma.f32(float %a, float %vx, float %vy)
  store float %r, ptr addrspace(1) %py, align 4
  %next = add i32 %i, %step
  %more = icmp slt i32 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

; out[block] = tree sum of the block's (up to 256) inputs, through static shared memory.
@tree_partial = internal addrspace(3) global [256 x float] undef, align 4
define void @tree_reduce(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %t
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %load, label %store
load:
  %pin = getelementptr inbounds float, ptr addrspace(1) %in, i32 %i
  %v = load float, ptr addrspace(1) %pin, align 4
  br label %store
store:
  %val = phi float [ %v, %load ], [ 0.0, %entry ]
  %slot = getelementptr inbounds [256 x float], ptr addrspace(3) @tree_partial, i32 0, i32 %t
  store float %val, ptr addrspace(3) %slot, align 4
  call void @llvm.nvvm.barrier0()
  %half = lshr i32 %ntid, 1
  %any = icmp ne i32 %half, 0
  br i1 %any, label %step, label %finish
step:
  %stride = phi i32 [ %half, %store ], [ %nextstride, %sync ]
  %active = icmp ult i32 %t, %stride
  br i1 %active, label %add, label %sync
add:
  %other = add i32 %t, %stride
  %pother = getelementptr inbounds [256 x float], ptr addrspace(3) @tree_partial, i32 0, i32 %other
  %a = load float, ptr addrspace(3) %slot, align 4
  %b = load float, ptr addrspace(3) %pother, align 4
  %s = fadd float %a, %b
  store float %s, ptr addrspace(3) %slot, align 4
  br label %sync
sync:
  call void @llvm.nvvm.barrier0()
  %nextstride = lshr i32 %stride, 1
  %again = icmp ne i32 %nextstride, 0
  br i1 %again, label %step, label %finish
finish:
  %first = icmp eq i32 %t, 0
  br i1 %first, label %write, label %done
write:
  %p0 = getelementptr inbounds [256 x float], ptr addrspace(3) @tree_partial, i32 0, i32 0
  %sum = load float, ptr addrspace(3) %p0, align 4
  %pout = getelementptr inbounds float, ptr addrspace(1) %out, i32 %ctaid
  store float %sum, ptr addrspace(1) %pout, align 4
  br label %done
done:
  ret void
}

; Grid-stride sum, warp-shuffle tree, lane 0 adds into *out atomically.
define void @warp_shuffle_reduce(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nctaid = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %base = mul i32 %ctaid, %ntid
  %start = add i32 %base, %tid
  %step = mul i32 %nctaid, %ntid
  %in0 = icmp slt i32 %start, %n
  br i1 %in0, label %loop, label %reduce
loop:
  %i = phi i32 [ %start, %entry ], [ %next, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %sum, %loop ]
  %p = getelementptr inbounds float, ptr addrspace(1) %in, i32 %i
  %v = load float, ptr addrspace(1) %p, align 4
  %sum = fadd float %acc, %v
  %next = add i32 %i, %step
  %more = icmp slt i32 %next, %n
  br i1 %more, label %loop, label %reduce
reduce:
  %v0 = phi float [ 0.0, %entry ], [ %sum, %loop ]
  %s16 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v0, i32 16, i32 31)
  %v1 = fadd float %v0, %s16
  %s8 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v1, i32 8, i32 31)
  %v2 = fadd float %v1, %s8
  %s4 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v2, i32 4, i32 31)
  %v3 = fadd float %v2, %s4
  %s2 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v3, i32 2, i32 31)
  %v4 = fadd float %v3, %s2
  %s1 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v4, i32 1, i32 31)
  %v5 = fadd float %v4, %s1
  %lane = and i32 %tid, 31
  %leader = icmp eq i32 %lane, 0
  br i1 %leader, label %add, label %done
add:
  %old = atomicrmw fadd ptr addrspace(1) %out, float %v5 monotonic, align 4
  br label %done
done:
  ret void
}

; Tiled transpose through a padded 32x33 shared tile; blocks of 32x8 threads.
@tile = internal addrspace(3) global [32 x [33 x float]] undef, align 4
define void @tiled_transpose(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %rows, i32 %cols) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %bx32 = shl i32 %bx, 5
  %by32 = shl i32 %by, 5
  %x = add i32 %bx32, %tx
  %y = add i32 %by32, %ty
  br label %load_loop
load_loop:
  %j = phi i32 [ 0, %entry ], [ %jn, %load_next ]
  %yj = add i32 %y, %j
  %xin = icmp slt i32 %x, %cols
  %yin = icmp slt i32 %yj, %rows
  %ok = and i1 %xin, %yin
  br i1 %ok, label %load, label %load_next
load:
  %row = mul i32 %yj, %cols
  %idx = add i32 %row, %x
  %pin = getelementptr inbounds float, ptr addrspace(1) %in, i32 %idx
  %v = load float, ptr addrspace(1) %pin, align 4
  %tr = add i32 %ty, %j
  %pt = getelementptr inbounds [32 x [33 x float]], ptr addrspace(3) @tile, i32 0, i32 %tr, i32 %tx
  store float %v, ptr addrspace(3) %pt, align 4
  br label %load_next
load_next:
  %jn = add i32 %j, 8
  %lmore = icmp slt i32 %jn, 32
  br i1 %lmore, label %load_loop, label %sync
sync:
  call void @llvm.nvvm.barrier0()
  %x2 = add i32 %by32, %tx
  %y2 = add i32 %bx32, %ty
  br label %store_loop
store_loop:
  %k = phi i32 [ 0, %sync ], [ %kn, %store_next ]
  %yk = add i32 %y2, %k
  %x2in = icmp slt i32 %x2, %rows
  %ykin = icmp slt i32 %yk, %cols
  %ok2 = and i1 %x2in, %ykin
  br i1 %ok2, label %store, label %store_next
store:
  %tc = add i32 %ty, %k
  %ps = getelementptr inbounds [32 x [33 x float]], ptr addrspace(3) @tile, i32 0, i32 %tx, i32 %tc
  %w = load float, ptr addrspace(3) %ps, align 4
  %orow = mul i32 %yk, %rows
  %oidx = add i32 %orow, %x2
  %pout = getelementptr inbounds float, ptr addrspace(1) %out, i32 %oidx
  store float %w, ptr addrspace(1) %pout, align 4
  br label %store_next
store_next:
  %kn = add i32 %k, 8
  %smore = icmp slt i32 %kn, 32
  br i1 %smore, label %store_loop, label %done
done:
  ret void
}

; Histogram with per-block counts in dynamic shared memory.
@local_bins = external addrspace(3) global [0 x i32], align 4
define void @atomic_histogram(ptr addrspace(1) %in, ptr addrspace(1) %bins, i32 %n, i32 %nbins) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nctaid = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  br label %zero_check
zero_check:
  %b = phi i32 [ %tid, %entry ], [ %bn, %zero ]
  %zin = icmp slt i32 %b, %nbins
  br i1 %zin, label %zero, label %zero_done
zero:
  %pz = getelementptr inbounds [0 x i32], ptr addrspace(3) @local_bins, i32 0, i32 %b
  store i32 0, ptr addrspace(3) %pz, align 4
  %bn = add i32 %b, %ntid
  br label %zero_check
zero_done:
  call void @llvm.nvvm.barrier0()
  %base = mul i32 %ctaid, %ntid
  %start = add i32 %base, %tid
  %step = mul i32 %nctaid, %ntid
  br label %count_check
count_check:
  %i = phi i32 [ %start, %zero_done ], [ %in_next, %count ]
  %cin = icmp slt i32 %i, %n
  br i1 %cin, label %count, label %count_done
count:
  %pin = getelementptr inbounds i32, ptr addrspace(1) %in, i32 %i
  %v = load i32, ptr addrspace(1) %pin, align 4
  %bin = urem i32 %v, %nbins
  %pb = getelementptr inbounds [0 x i32], ptr addrspace(3) @local_bins, i32 0, i32 %bin
  %old = atomicrmw add ptr addrspace(3) %pb, i32 1 monotonic, align 4
  %in_next = add i32 %i, %step
  br label %count_check
count_done:
  call void @llvm.nvvm.barrier0()
  br label %merge_check
merge_check:
  %m = phi i32 [ %tid, %count_done ], [ %mn, %merge ]
  %min = icmp slt i32 %m, %nbins
  br i1 %min, label %merge, label %done
merge:
  %pl = getelementptr inbounds [0 x i32], ptr addrspace(3) @local_bins, i32 0, i32 %m
  %c = load i32, ptr addrspace(3) %pl, align 4
  %pg = getelementptr inbounds i32, ptr addrspace(1) %bins, i32 %m
  %old2 = atomicrmw add ptr addrspace(1) %pg, i32 %c monotonic, align 4
  %mn = add i32 %m, %ntid
  br label %merge_check
done:
  ret void
}

; f16 and bf16 arithmetic: h_out[4i..] = a+b, a*b, fma(a,b,a), max(a*b, 0.5); b_out[3i..] =
; c+d, c*d, bf16(float(c)*3); f_out[2i..] = float(a)+float(d), float(a-b).
declare half @llvm.fma.f16(half, half, half)
declare half @llvm.maxnum.f16(half, half)
define void @half_math(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c,
                       ptr addrspace(1) %d, ptr addrspace(1) %hout, ptr addrspace(1) %bout,
                       ptr addrspace(1) %fout, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %body, label %done
body:
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i32 %i
  %pb = getelementptr inbounds half, ptr addrspace(1) %b, i32 %i
  %pc = getelementptr inbounds bfloat, ptr addrspace(1) %c, i32 %i
  %pd = getelementptr inbounds bfloat, ptr addrspace(1) %d, i32 %i
  %x = load half, ptr addrspace(1) %pa, align 2
  %y = load half, ptr addrspace(1) %pb, align 2
  %u = load bfloat, ptr addrspace(1) %pc, align 2
  %v = load bfloat, ptr addrspace(1) %pd, align 2
  %sum = fadd half %x, %y
  %prod = fmul half %x, %y
  %fma = call half @llvm.fma.f16(half %x, half %y, half %x)
  %mx = call half @llvm.maxnum.f16(half %prod, half 0xH3800)
  %i4 = mul i32 %i, 4
  %ph0 = getelementptr inbounds half, ptr addrspace(1) %hout, i32 %i4
  %ph1 = getelementptr inbounds half, ptr addrspace(1) %ph0, i32 1
  %ph2 = getelementptr inbounds half, ptr addrspace(1) %ph0, i32 2
  %ph3 = getelementptr inbounds half, ptr addrspace(1) %ph0, i32 3
  store half %sum, ptr addrspace(1) %ph0, align 2
  store half %prod, ptr addrspace(1) %ph1, align 2
  store half %fma, ptr addrspace(1) %ph2, align 2
  store half %mx, ptr addrspace(1) %ph3, align 2
  %bsum = fadd bfloat %u, %v
  %bprod = fmul bfloat %u, %v
  %uf = fpext bfloat %u to float
  %u3 = fmul float %uf, 3.0
  %bu3 = fptrunc float %u3 to bfloat
  %i3 = mul i32 %i, 3
  %pb0 = getelementptr inbounds bfloat, ptr addrspace(1) %bout, i32 %i3
  %pb1 = getelementptr inbounds bfloat, ptr addrspace(1) %pb0, i32 1
  %pb2 = getelementptr inbounds bfloat, ptr addrspace(1) %pb0, i32 2
  store bfloat %bsum, ptr addrspace(1) %pb0, align 2
  store bfloat %bprod, ptr addrspace(1) %pb1, align 2
  store bfloat %bu3, ptr addrspace(1) %pb2, align 2
  %xf = fpext half %x to float
  %vf = fpext bfloat %v to float
  %f0 = fadd float %xf, %vf
  %diff = fsub half %x, %y
  %f1 = fpext half %diff to float
  %i2 = mul i32 %i, 2
  %pf0 = getelementptr inbounds float, ptr addrspace(1) %fout, i32 %i2
  %pf1 = getelementptr inbounds float, ptr addrspace(1) %pf0, i32 1
  store float %f0, ptr addrspace(1) %pf0, align 4
  store float %f1, ptr addrspace(1) %pf1, align 4
  br label %done
done:
  ret void
}

; Divergent paths (a loop with a per-thread trip count, a Collatz loop with continue, a plain
; branch), then a ballot and a shuffle after reconvergence. Same as known_kernels.cu.
define void @divergent_branches(ptr addrspace(1) %in, ptr addrspace(1) %out, ptr addrspace(1) %ballots, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %load, label %classify
load:
  %p = getelementptr inbounds i32, ptr addrspace(1) %in, i32 %i
  %lv = load i32, ptr addrspace(1) %p, align 4
  br label %classify
classify:
  %v = phi i32 [ %lv, %load ], [ 0, %entry ]
  %m = srem i32 %v, 3
  %is0 = icmp eq i32 %m, 0
  br i1 %is0, label %case0, label %not0
case0:
  %trip = and i32 %v, 7
  %has = icmp ne i32 %trip, 0
  br i1 %has, label %loop0, label %join
loop0:
  %k0 = phi i32 [ 0, %case0 ], [ %k0n, %loop0 ]
  %r0 = phi i32 [ 0, %case0 ], [ %r0n, %loop0 ]
  %kv = mul i32 %k0, %v
  %r0n = add i32 %r0, %kv
  %k0n = add i32 %k0, 1
  %more0 = icmp ult i32 %k0n, %trip
  br i1 %more0, label %loop0, label %join
not0:
  %is1 = icmp eq i32 %m, 1
  br i1 %is1, label %collatz_head, label %case2
collatz_head:
  %k = phi i32 [ %v, %not0 ], [ %kodd, %odd ], [ %keven, %even ]
  %r1 = phi i32 [ 0, %not0 ], [ %r1, %odd ], [ %r1n, %even ]
  %gt1 = icmp sgt i32 %k, 1
  br i1 %gt1, label %collatz_body, label %join
collatz_body:
  %bit = and i32 %k, 1
  %isodd = icmp ne i32 %bit, 0
  br i1 %isodd, label %odd, label %even
odd:
  %k3 = mul i32 %k, 3
  %kodd = add i32 %k3, 1
  br label %collatz_head
even:
  %keven = ashr i32 %k, 1
  %r1n = add i32 %r1, 1
  br label %collatz_head
case2:
  %neg = icmp slt i32 %v, 0
  %nv = sub i32 0, %v
  %v2 = mul i32 %v, 2
  %r2 = select i1 %neg, i32 %nv, i32 %v2
  br label %join
join:
  %r = phi i32 [ 0, %case0 ], [ %r0n, %loop0 ], [ %r1, %collatz_head ], [ %r2, %case2 ]
  %big = icmp sgt i32 %r, 10
  %ballot = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %big)
  %left = call i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %r, i32 1, i32 0)
  %lane = and i32 %tid, 31
  %lane0 = icmp eq i32 %lane, 0
  %add = select i1 %lane0, i32 0, i32 %left
  %res = add i32 %r, %add
  br i1 %inb, label %write, label %done
write:
  %po = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %i
  store i32 %res, ptr addrspace(1) %po, align 4
  br i1 %lane0, label %write_ballot, label %done
write_ballot:
  %w = sdiv i32 %i, 32
  %pbal = getelementptr inbounds i32, ptr addrspace(1) %ballots, i32 %w
  store i32 %ballot, ptr addrspace(1) %pbal, align 4
  br label %done
done:
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3, !4, !5, !6}
!0 = !{ptr @grid_stride_saxpy, !"kernel", i32 1}
!1 = !{ptr @tree_reduce, !"kernel", i32 1}
!2 = !{ptr @warp_shuffle_reduce, !"kernel", i32 1}
!3 = !{ptr @tiled_transpose, !"kernel", i32 1}
!4 = !{ptr @atomic_histogram, !"kernel", i32 1}
!5 = !{ptr @half_math, !"kernel", i32 1}
!6 = !{ptr @divergent_branches, !"kernel", i32 1}
