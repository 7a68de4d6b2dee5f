; RUN: opt -load-pass-plugin=%strobe_plugin -passes=strobe-instrument -S %s \
; RUN:   | FileCheck %s %abi_vars --implicit-check-not=strobe.tick --implicit-check-not=strobe.pop \
; RUN:       --implicit-check-not=strobe.ret
; RUN: opt -load-pass-plugin=%strobe_plugin -passes=strobe-instrument,verify -disable-output %s
; Each intrinsic of an instrumented function becomes the inline fast path of strobe/
; dynstack.h: the thread's head through one llvm.threadlocal.address; for tick the
; count, the push, and the walk down the entries at the same depth (a repeat, a push on
; an entry on the descriptor's constant parent chain, siblings popped); for pop and ret
; the walk down the stale entries; branches weighted unlikely to a cold block calling
; the slow path.  A descriptor without STROBE_DESC_NESTED leaves all but the repeat to
; the runtime (nested.ll).  Every new instruction keeps the debug location of the call
; it replaces.  Offsets are the runtime's, from strobe_abi.py (%abi_vars, lit.cfg.py).
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@.str.fact = private unnamed_addr constant [10 x i8] c"Main.fact\00"
@.str.file = private unnamed_addr constant [8 x i8] c"Fact.hs\00"
@outer = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { i32 1, i32 15, i32 1, i32 16, i32 30, i32 1, ptr @.str.fact, ptr @.str.file, ptr null, ptr null }, section "strobe_ticks", align 8
@desc = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { i32 1, i32 15, i32 10, i32 15, i32 25, i32 1, ptr @.str.fact, ptr @.str.file, ptr null, ptr @outer }, section "strobe_ticks", align 8

declare void @strobe.tick(ptr, i64)
declare void @strobe.pop(i64)
declare void @strobe.ret(i64)

; CHECK: @strobe_dynstack_head = external thread_local(initialexec) global { ptr, ptr, i64, ptr, ptr }, align 8

; CHECK-LABEL: define ghccc void @Main_fact_info(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %sp = ptrtoint ptr %Sp to i64, !dbg [[L1:![0-9]+]]
; ret(sp): the top's wm <=u sp -> walk down the stale entries
; CHECK-NEXT:    [[H:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @strobe_dynstack_head), !dbg [[L1]]
; CHECK-NEXT:    [[T0:%.*]] = load ptr, ptr [[H]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[WMA:%.*]] = getelementptr inbounds i8, ptr [[T0]], i64 [[#ENTRY_WM]], !dbg [[L1]]
; CHECK-NEXT:    [[WM:%.*]] = load i64, ptr [[WMA]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[STALE:%.*]] = icmp ule i64 [[WM]], %sp, !dbg [[L1]]
; CHECK-NEXT:    br i1 [[STALE]], label %[[RLOOP:ret.loop[0-9]*]], label %[[RCONT:ret.cont[0-9]*]], !dbg [[L1]]{{$}}
; CHECK:       [[RLOOP]]:
; CHECK-NEXT:    [[T:%.*]] = phi ptr [ [[T0]], %entry ], [ [[B:%[a-z.0-9]+]], %[[RLOOP]] ], !dbg [[L1]]
; CHECK-NEXT:    [[B]] = getelementptr inbounds i8, ptr [[T]], i64 -[[#ENTRY_SIZE]], !dbg [[L1]]
; CHECK-NEXT:    [[BWA:%.*]] = getelementptr inbounds i8, ptr [[B]], i64 [[#ENTRY_WM]], !dbg [[L1]]
; CHECK-NEXT:    [[BWM:%.*]] = load i64, ptr [[BWA]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[BST:%.*]] = icmp ule i64 [[BWM]], %sp, !dbg [[L1]]
; CHECK-NEXT:    br i1 [[BST]], label %[[RLOOP]], label %[[RDONE:ret.done[0-9]*]], !dbg [[L1]]
; below the base (the dropped entries) -> cold, else publish the new top
; CHECK:       [[RDONE]]:
; CHECK-NEXT:    [[BASEA:%.*]] = getelementptr inbounds i8, ptr [[H]], i64 [[#HEAD_BASE]], !dbg [[L1]]
; CHECK-NEXT:    [[BASE:%.*]] = load ptr, ptr [[BASEA]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[UNDER:%.*]] = icmp ult ptr [[B]], [[BASE]], !dbg [[L1]]
; CHECK-NEXT:    br i1 [[UNDER]], label %[[RCOLD:ret.cold[0-9]*]], label %[[RSET:ret.set[0-9]*]], !dbg [[L1]], !prof [[THEN_COLD:![0-9]+]]
; CHECK:       [[RSET]]:
; CHECK-NEXT:    store atomic ptr [[B]], ptr [[H]] release, align 8, !dbg [[L1]]
; CHECK-NEXT:    br label %[[RCONT]], !dbg [[L1]]
; tick(desc, sp): count it; deeper than the top -> push
; CHECK:       [[RCONT]]:
; CHECK-NEXT:    [[H:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @strobe_dynstack_head), !dbg [[L2:![0-9]+]]
; CHECK-NEXT:    [[TKA:%.*]] = getelementptr inbounds i8, ptr [[H]], i64 [[#HEAD_TICKS]], !dbg [[L2]]
; CHECK-NEXT:    [[TK:%.*]] = load atomic i64, ptr [[TKA]] monotonic, align 8, !dbg [[L2]]
; CHECK-NEXT:    [[TK1:%.*]] = add i64 [[TK]], 1, !dbg [[L2]]
; CHECK-NEXT:    store atomic i64 [[TK1]], ptr [[TKA]] monotonic, align 8, !dbg [[L2]]
; CHECK-NEXT:    [[T:%.*]] = load ptr, ptr [[H]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[WMA:%.*]] = getelementptr inbounds i8, ptr [[T]], i64 [[#ENTRY_WM]], !dbg [[L2]]
; CHECK-NEXT:    [[WM:%.*]] = load i64, ptr [[WMA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[DEEPER:%.*]] = icmp ult i64 %sp, [[WM]], !dbg [[L2]]
; CHECK-NEXT:    br i1 [[DEEPER]], label %[[ROOM:tick.room[0-9]*]], label %[[SAME:tick.same[0-9]*]], !dbg [[L2]]{{$}}
; shallower than the top: stale entries, for the runtime
; CHECK:       [[SAME]]:
; CHECK-NEXT:    [[SW:%.*]] = icmp eq i64 [[WM]], %sp, !dbg [[L2]]
; CHECK-NEXT:    br i1 [[SW]], label %[[WALK:tick.walk[0-9]*]], label %[[TCOLD:tick.cold[0-9]*]], !dbg [[L2]], !prof [[ELSE_COLD:![0-9]+]]
; the walk down the entries at sp: desc itself -> a repeat (rule 2a)
; CHECK:       [[WALK]]:
; CHECK-NEXT:    [[AT:%.*]] = phi ptr [ [[T]], %[[SAME]] ], [ [[BELOW:%[a-z.0-9]+]], %[[STEP:tick.step[0-9]*]] ], !dbg [[L2]]
; CHECK-NEXT:    [[D:%.*]] = load ptr, ptr [[AT]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[AGAIN:%.*]] = icmp eq ptr [[D]], @desc, !dbg [[L2]]
; CHECK-NEXT:    br i1 [[AGAIN]], label %[[AGAINB:tick.again[0-9]*]], label %[[OTHER:tick.other[0-9]*]], !dbg [[L2]]{{$}}
; CHECK:       [[AGAINB]]:
; CHECK-NEXT:    [[ATTOP:%.*]] = icmp eq ptr [[AT]], [[T]], !dbg [[L2]]
; CHECK-NEXT:    br i1 [[ATTOP]], label %[[REPEAT:tick.repeat[0-9]*]], label %[[POPPED:tick.popped[0-9]*]], !dbg [[L2]]{{$}}
; siblings were popped: it runs again (its tail flag cleared), and is the top
; CHECK:       [[POPPED]]:
; CHECK-NEXT:    [[FA:%.*]] = getelementptr inbounds i8, ptr [[AT]], i64 [[#ENTRY_FLAGS]], !dbg [[L2]]
; CHECK-NEXT:    [[FL:%.*]] = load i32, ptr [[FA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[FL1:%.*]] = and i32 [[FL]], -2, !dbg [[L2]]
; CHECK-NEXT:    store i32 [[FL1]], ptr [[FA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    store atomic ptr [[AT]], ptr [[H]] release, align 8, !dbg [[L2]]
; CHECK-NEXT:    br label %[[REPEAT]], !dbg [[L2]]
; CHECK:       [[REPEAT]]:
; CHECK-NEXT:    [[RA:%.*]] = getelementptr inbounds i8, ptr [[AT]], i64 [[#ENTRY_REPEATS]], !dbg [[L2]]
; CHECK-NEXT:    [[R:%.*]] = load atomic i64, ptr [[RA]] monotonic, align 8, !dbg [[L2]]
; CHECK-NEXT:    [[R1:%.*]] = add i64 [[R]], 1, !dbg [[L2]]
; CHECK-NEXT:    store atomic i64 [[R1]], ptr [[RA]] monotonic, align 8, !dbg [[L2]]
; CHECK-NEXT:    br label %[[TCONT:tick.cont[0-9]*]], !dbg [[L2]]
; on desc's parent chain (here @outer, a constant) -> push on it (rule 2b)
; CHECK:       [[OTHER]]:
; CHECK-NEXT:    [[ENC:%.*]] = icmp eq ptr [[D]], @outer, !dbg [[L2]]
; CHECK-NEXT:    br i1 [[ENC]], label %[[ROOM]], label %[[SIB:tick.sibling[0-9]*]], !dbg [[L2]]{{$}}
; desc's function -> a finished sibling: pop it (rule 2c); another function -> cold
; CHECK:       [[SIB]]:
; CHECK-NEXT:    [[DFA:%.*]] = getelementptr inbounds i8, ptr [[D]], i64 [[#DESC_FUNCTION]], !dbg [[L2]]
; CHECK-NEXT:    [[DF:%.*]] = load ptr, ptr [[DFA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[FN:%.*]] = load ptr, ptr getelementptr inbounds (i8, ptr @desc, i64 [[#DESC_FUNCTION]]), align 8, !dbg [[L2]]
; CHECK-NEXT:    [[SAMEF:%.*]] = icmp eq ptr [[DF]], [[FN]], !dbg [[L2]]
; CHECK-NEXT:    br i1 [[SAMEF]], label %[[STEP]], label %[[TCOLD]], !dbg [[L2]], !prof [[ELSE_COLD]]
; CHECK:       [[STEP]]:
; CHECK-NEXT:    [[BELOW]] = getelementptr inbounds i8, ptr [[AT]], i64 -[[#ENTRY_SIZE]], !dbg [[L2]]
; CHECK-NEXT:    [[BWA:%.*]] = getelementptr inbounds i8, ptr [[BELOW]], i64 [[#ENTRY_WM]], !dbg [[L2]]
; CHECK-NEXT:    [[BWM:%.*]] = load i64, ptr [[BWA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[BSAME:%.*]] = icmp eq i64 [[BWM]], %sp, !dbg [[L2]]
; CHECK-NEXT:    br i1 [[BSAME]], label %[[WALK]], label %[[ROOM]], !dbg [[L2]]{{$}}
; the push, on the top, on an enclosing entry, or on what the pops left (rule 3)
; CHECK:       [[ROOM]]:
; CHECK-NEXT:    [[BASE:%.*]] = phi ptr [ [[T]], %[[RCONT]] ], [ [[AT]], %[[OTHER]] ], [ [[BELOW]], %[[STEP]] ], !dbg [[L2]]
; CHECK-NEXT:    [[N:%.*]] = getelementptr inbounds i8, ptr [[BASE]], i64 [[#ENTRY_SIZE]], !dbg [[L2]]
; CHECK-NEXT:    [[LIMA:%.*]] = getelementptr inbounds i8, ptr [[H]], i64 [[#HEAD_LIMIT]], !dbg [[L2]]
; CHECK-NEXT:    [[LIM:%.*]] = load ptr, ptr [[LIMA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[HASROOM:%.*]] = icmp ult ptr [[N]], [[LIM]], !dbg [[L2]]
; CHECK-NEXT:    br i1 [[HASROOM]], label %[[PUSH:tick.push[0-9]*]], label %[[TCOLD]], !dbg [[L2]], !prof [[ELSE_COLD]]
; the entry {desc, sp, 0, 0}, then the release store of the top
; CHECK:       [[PUSH]]:
; CHECK-NEXT:    store ptr @desc, ptr [[N]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[F:%.*]] = getelementptr inbounds i8, ptr [[N]], i64 [[#ENTRY_WM]], !dbg [[L2]]
; CHECK-NEXT:    store i64 %sp, ptr [[F]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[F:%.*]] = getelementptr inbounds i8, ptr [[N]], i64 [[#ENTRY_REPEATS]], !dbg [[L2]]
; CHECK-NEXT:    store i64 0, ptr [[F]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[F:%.*]] = getelementptr inbounds i8, ptr [[N]], i64 [[#ENTRY_FLAGS]], !dbg [[L2]]
; CHECK-NEXT:    store i64 0, ptr [[F]], align 8, !dbg [[L2]]
; CHECK-NEXT:    store atomic ptr [[N]], ptr [[H]] release, align 8, !dbg [[L2]]
; CHECK-NEXT:    br label %[[TCONT]], !dbg [[L2]]
; pop(sp): as ret, with <u, and the first branch weighted unlikely
; CHECK:       [[TCONT]]:
; CHECK-NEXT:    %Sp.up = getelementptr inbounds i8, ptr %Sp, i64 16, !dbg [[L3:![0-9]+]]
; CHECK-NEXT:    %sp.up = ptrtoint ptr %Sp.up to i64, !dbg [[L3]]
; CHECK-NEXT:    [[H:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @strobe_dynstack_head), !dbg [[L3]]
; CHECK-NEXT:    [[T0:%.*]] = load ptr, ptr [[H]], align 8, !dbg [[L3]]
; CHECK-NEXT:    [[WMA:%.*]] = getelementptr inbounds i8, ptr [[T0]], i64 [[#ENTRY_WM]], !dbg [[L3]]
; CHECK-NEXT:    [[WM:%.*]] = load i64, ptr [[WMA]], align 8, !dbg [[L3]]
; CHECK-NEXT:    [[STALE:%.*]] = icmp ult i64 [[WM]], %sp.up, !dbg [[L3]]
; CHECK-NEXT:    br i1 [[STALE]], label %[[PLOOP:pop.loop[0-9]*]], label %[[PCONT:pop.cont[0-9]*]], !dbg [[L3]], !prof [[THEN_COLD]]
; CHECK:       [[PLOOP]]:
; CHECK:         icmp ult i64 {{%.*}}, %sp.up, !dbg [[L3]]
; CHECK:         br i1 {{%.*}}, label %[[PLOOP]], label %[[PDONE:pop.done[0-9]*]], !dbg [[L3]]
; CHECK:       [[PDONE]]:
; CHECK:         br i1 {{%.*}}, label %[[PCOLD:pop.cold[0-9]*]], label %[[PSET:pop.set[0-9]*]], !dbg [[L3]], !prof [[THEN_COLD]]
; CHECK:       [[PSET]]:
; CHECK-NEXT:    store atomic ptr {{%.*}}, ptr [[H]] release, align 8, !dbg [[L3]]
; CHECK-NEXT:    br label %[[PCONT]], !dbg [[L3]]
; CHECK:       [[PCONT]]:
; CHECK-NEXT:    %k = load ptr, ptr %Sp.up, align 8, !dbg [[L3]]
; CHECK-NEXT:    musttail call ghccc void %k(ptr %Base, ptr %Sp.up, ptr %Hp, i64 %R1), !dbg [[L3]]
; CHECK-NEXT:    ret void
; The cold blocks, at the end: a cold C call of the slow path, then back.
; CHECK:       [[RCOLD]]:
; CHECK-NEXT:    call void @strobe_ret(i64 %sp) [[COLD:#[0-9]+]], !dbg [[L1]]
; CHECK-NEXT:    br label %[[RCONT]], !dbg [[L1]]
; CHECK:       [[TCOLD]]:
; CHECK-NEXT:    call void @strobe_tick(ptr @desc, i64 %sp) [[COLD]], !dbg [[L2]]
; CHECK-NEXT:    br label %[[TCONT]], !dbg [[L2]]
; CHECK:       [[PCOLD]]:
; CHECK-NEXT:    call void @strobe_pop(i64 %sp.up) [[COLD]], !dbg [[L3]]
; CHECK-NEXT:    br label %[[PCONT]], !dbg [[L3]]
; CHECK-NEXT:  }
define ghccc void @Main_fact_info(ptr %Base, ptr %Sp, ptr %Hp, i64 %R1) #0 !dbg !10 {
entry:
  %sp = ptrtoint ptr %Sp to i64, !dbg !11
  call void @strobe.ret(i64 %sp), !dbg !11
  call void @strobe.tick(ptr @desc, i64 %sp), !dbg !12
  %Sp.up = getelementptr inbounds i8, ptr %Sp, i64 16, !dbg !13
  %sp.up = ptrtoint ptr %Sp.up to i64, !dbg !13
  call void @strobe.pop(i64 %sp.up), !dbg !13
  %k = load ptr, ptr %Sp.up, align 8, !dbg !13
  musttail call ghccc void %k(ptr %Base, ptr %Sp.up, ptr %Hp, i64 %R1), !dbg !13
  ret void
}

; The slow paths: C, cold, nounwind; the intrinsics' declarations are gone.
; CHECK-DAG: declare void @strobe_tick(ptr, i64) [[COLDNU:#[0-9]+]]
; CHECK-DAG: declare void @strobe_pop(i64) [[COLDNU]]
; CHECK-DAG: declare void @strobe_ret(i64) [[COLDNU]]
; CHECK-DAG: attributes [[COLDNU]] = { cold nounwind }
; CHECK-DAG: attributes [[COLD]] = { cold }
; CHECK-DAG: [[THEN_COLD]] = !{!"branch_weights", i32 1, i32 1048575}
; CHECK-DAG: [[ELSE_COLD]] = !{!"branch_weights", i32 1048575, i32 1}
; CHECK-DAG: [[L1]] = !DILocation(line: 15, column: 10,
; CHECK-DAG: [[L2]] = !DILocation(line: 15, column: 12,
; CHECK-DAG: [[L3]] = !DILocation(line: 16, column: 3,

attributes #0 = { nounwind "strobe-instrument" "strobe-name"="Main.fact" }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2}

!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "strobec", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "Fact.hs", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !DISubroutineType(types: !{})
!10 = distinct !DISubprogram(name: "Main.fact", scope: !1, file: !1, line: 15, type: !4, scopeLine: 15, spFlags: DISPFlagDefinition, unit: !0)
!11 = !DILocation(line: 15, column: 10, scope: !10)
!12 = !DILocation(line: 15, column: 12, scope: !10)
!13 = !DILocation(line: 16, column: 3, scope: !10)
