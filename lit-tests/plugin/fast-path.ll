; RUN: opt -load-pass-plugin=%strobe_plugin -passes=strobe-instrument -S %s \
; RUN:   | FileCheck %s %abi_vars --implicit-check-not=strobe.tick --implicit-check-not=strobe.pop \
; RUN:       --implicit-check-not=strobe.ret
; RUN: opt -load-pass-plugin=%strobe_plugin -passes=strobe-instrument,verify -disable-output %s
; Each intrinsic of an instrumented function becomes the inline fast path of strobe/
; dynstack.h (plugin/instrument.c, Note [The fast paths in IR]): the thread's head
; through one llvm.threadlocal.address; for tick the push onto a deeper frame, the
; repeat of the top, and the walk down the entries at the same depth (a push on an
; entry on the descriptor's constant parent chain, siblings popped and cleared); for
; pop and ret the walk down the stale entries, each cleared, with no slow path at all;
; branches weighted unlikely to a cold block that calls the tick's slow path through
; its trampoline (Note [The cold calls]).  A descriptor without STROBE_DESC_NESTED leaves
; all but the repeat to the runtime (nested.ll).  Every new instruction keeps the debug
; location of the call it replaces.  Offsets are the runtime's, from strobe_abi.py
; (%abi_vars, lit.cfg.py).  Without -strobe-count-ticks no tick is counted
; (dynstack/codegen-options.test).
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
; CHECK-SAME:  [[ATTRS:#[0-9]+]]
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %sp = ptrtoint ptr %Sp to i64, !dbg [[L1:![0-9]+]]
; ret(sp): the top's wm <=u sp -> it goes
; CHECK-NEXT:    [[H:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @strobe_dynstack_head), !dbg [[L1]]
; CHECK-NEXT:    [[T0:%.*]] = load ptr, ptr [[H]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[WMA:%.*]] = getelementptr inbounds i8, ptr [[T0]], i64 [[#ENTRY_WM]], !dbg [[L1]]
; CHECK-NEXT:    [[WM:%.*]] = load i64, ptr [[WMA]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[STALE:%.*]] = icmp ule i64 [[WM]], %sp, !dbg [[L1]]
; CHECK-NEXT:    br i1 [[STALE]], label %[[RONE:ret.one[0-9]*]], label %[[RCONT:ret.cont[0-9]*]], !dbg [[L1]]{{$}}
; does the one below go too?
; CHECK:       [[RONE]]:
; CHECK-NEXT:    [[B:%.*]] = getelementptr inbounds i8, ptr [[T0]], i64 -[[#ENTRY_SIZE]], !dbg [[L1]]
; CHECK-NEXT:    [[BWA:%.*]] = getelementptr inbounds i8, ptr [[B]], i64 [[#ENTRY_WM]], !dbg [[L1]]
; CHECK-NEXT:    [[BWM:%.*]] = load i64, ptr [[BWA]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[BST:%.*]] = icmp ule i64 [[BWM]], %sp, !dbg [[L1]]
; CHECK-NEXT:    br i1 [[BST]], label %[[RMORE:ret.more[0-9]*]], label %[[RSET:ret.set[0-9]*]], !dbg [[L1]]{{$}}
; one: clear it, and top -= 1 as a relaxed load and a release store (one x86 addq)
; CHECK:       [[RSET]]:
; CHECK-NEXT:    [[C:%.*]] = getelementptr inbounds i8, ptr [[T0]], i64 [[#ENTRY_REPEATS]], !dbg [[L1]]
; CHECK-NEXT:    store i64 0, ptr [[C]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[C:%.*]] = getelementptr inbounds i8, ptr [[T0]], i64 [[#ENTRY_FLAGS]], !dbg [[L1]]
; CHECK-NEXT:    store i64 0, ptr [[C]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[TA:%.*]] = load atomic ptr, ptr [[H]] monotonic, align 8, !dbg [[L1]]
; CHECK-NEXT:    [[TM:%.*]] = getelementptr inbounds i8, ptr [[TA]], i64 -[[#ENTRY_SIZE]], !dbg [[L1]]
; CHECK-NEXT:    store atomic ptr [[TM]], ptr [[H]] release, align 8, !dbg [[L1]]
; CHECK-NEXT:    br label %[[RCONT]], !dbg [[L1]]
; more: as one, for each stale one from the top down, to the first that is not (a
; sentinel at the latest)
; CHECK:       [[RMORE]]:
; CHECK-NEXT:    [[AT:%.*]] = phi ptr [ [[T0]], %[[RONE]] ], [ [[NX:%[a-z.0-9]+]], %[[RMORE]] ], !dbg [[L1]]
; CHECK-NEXT:    [[C:%.*]] = getelementptr inbounds i8, ptr [[AT]], i64 [[#ENTRY_REPEATS]], !dbg [[L1]]
; CHECK-NEXT:    store i64 0, ptr [[C]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[C:%.*]] = getelementptr inbounds i8, ptr [[AT]], i64 [[#ENTRY_FLAGS]], !dbg [[L1]]
; CHECK-NEXT:    store i64 0, ptr [[C]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[TA:%.*]] = load atomic ptr, ptr [[H]] monotonic, align 8, !dbg [[L1]]
; CHECK-NEXT:    [[TM:%.*]] = getelementptr inbounds i8, ptr [[TA]], i64 -[[#ENTRY_SIZE]], !dbg [[L1]]
; CHECK-NEXT:    store atomic ptr [[TM]], ptr [[H]] release, align 8, !dbg [[L1]]
; CHECK-NEXT:    [[NX]] = getelementptr inbounds i8, ptr [[AT]], i64 -[[#ENTRY_SIZE]], !dbg [[L1]]
; CHECK:         icmp ule i64 {{%.*}}, %sp, !dbg [[L1]]
; CHECK-NEXT:    br i1 {{%.*}}, label %[[RMORE]], label %[[RCONT]], !dbg [[L1]]
; tick(desc, sp): deeper than the top -> push, if it is below the last slot
; CHECK:       [[RCONT]]:
; CHECK-NEXT:    [[H:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @strobe_dynstack_head), !dbg [[L2:![0-9]+]]
; CHECK-NEXT:    [[T:%.*]] = load ptr, ptr [[H]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[WMA:%.*]] = getelementptr inbounds i8, ptr [[T]], i64 [[#ENTRY_WM]], !dbg [[L2]]
; CHECK-NEXT:    [[WM:%.*]] = load i64, ptr [[WMA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[DEEPER:%.*]] = icmp ult i64 %sp, [[WM]], !dbg [[L2]]
; CHECK-NEXT:    br i1 [[DEEPER]], label %[[DEEP:tick.deeper[0-9]*]], label %[[SAME:tick.same[0-9]*]], !dbg [[L2]]{{$}}
; CHECK:       [[DEEP]]:
; CHECK-NEXT:    [[LIMA:%.*]] = getelementptr inbounds i8, ptr [[H]], i64 [[#HEAD_LIMIT]], !dbg [[L2]]
; CHECK-NEXT:    [[LIM:%.*]] = load ptr, ptr [[LIMA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[HASROOM:%.*]] = icmp ult ptr [[T]], [[LIM]], !dbg [[L2]]
; CHECK-NEXT:    br i1 [[HASROOM]], label %[[PUSH:tick.push[0-9]*]], label %[[TCOLD:tick.cold[0-9]*]], !dbg [[L2]], !prof [[ELSE_COLD:![0-9]+]]
; the slot above: desc and sp (the rest is 0 already), then top += 1
; CHECK:       [[PUSH]]:
; CHECK-NEXT:    [[F:%.*]] = getelementptr inbounds i8, ptr [[T]], i64 [[#ENTRY_SIZE]], !dbg [[L2]]
; CHECK-NEXT:    store ptr @desc, ptr [[F]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[F:%.*]] = getelementptr inbounds i8, ptr [[T]], i64 [[#ENTRY_SIZE+ENTRY_WM]], !dbg [[L2]]
; CHECK-NEXT:    store i64 %sp, ptr [[F]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[TA:%.*]] = load atomic ptr, ptr [[H]] monotonic, align 8, !dbg [[L2]]
; CHECK-NEXT:    [[TM:%.*]] = getelementptr inbounds i8, ptr [[TA]], i64 [[#ENTRY_SIZE]], !dbg [[L2]]
; CHECK-NEXT:    store atomic ptr [[TM]], ptr [[H]] release, align 8, !dbg [[L2]]
; CHECK-NEXT:    br label %[[TCONT:tick.cont[0-9]*]], !dbg [[L2]]
; shallower than the top: stale entries, for the runtime; at its depth: the top is
; desc itself -> a repeat (rule 2a)
; CHECK:       [[SAME]]:
; CHECK-NEXT:    [[WMA:%.*]] = getelementptr inbounds i8, ptr [[T]], i64 [[#ENTRY_WM]], !dbg [[L2]]
; CHECK-NEXT:    [[WM:%.*]] = load i64, ptr [[WMA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[SW:%.*]] = icmp eq i64 %sp, [[WM]], !dbg [[L2]]
; CHECK-NEXT:    br i1 [[SW]], label %[[TOP:tick.top[0-9]*]], label %[[TCOLD]], !dbg [[L2]], !prof [[ELSE_COLD]]
; CHECK:       [[TOP]]:
; CHECK-NEXT:    [[D:%.*]] = load ptr, ptr [[T]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[AGAIN:%.*]] = icmp eq ptr [[D]], @desc, !dbg [[L2]]
; CHECK-NEXT:    br i1 [[AGAIN]], label %[[REPEAT:tick.repeat[0-9]*]], label %[[OTHER:tick.other[0-9]*]], !dbg [[L2]]{{$}}
; CHECK:       [[REPEAT]]:
; CHECK-NEXT:    [[RA:%.*]] = getelementptr inbounds i8, ptr [[T]], i64 [[#ENTRY_REPEATS]], !dbg [[L2]]
; CHECK-NEXT:    [[R:%.*]] = load atomic i64, ptr [[RA]] monotonic, align 8, !dbg [[L2]]
; CHECK-NEXT:    [[R1:%.*]] = add i64 [[R]], 1, !dbg [[L2]]
; CHECK-NEXT:    store atomic i64 [[R1]], ptr [[RA]] monotonic, align 8, !dbg [[L2]]
; CHECK-NEXT:    br label %[[TCONT]], !dbg [[L2]]
; the walk down the entries at sp: on desc's parent chain (here @outer, a constant)
; -> push on it (rule 2b)
; CHECK:       [[OTHER]]:
; CHECK-NEXT:    [[AT:%.*]] = phi ptr [ [[T]], %[[TOP]] ], [ [[BELOW:%[a-z.0-9]+]], %[[NEXT:tick.next[0-9]*]] ], !dbg [[L2]]
; CHECK-NEXT:    [[D:%.*]] = load ptr, ptr [[AT]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[ENC:%.*]] = icmp eq ptr [[D]], @outer, !dbg [[L2]]
; CHECK-NEXT:    br i1 [[ENC]], label %[[ROOM:tick.room[0-9]*]], label %[[SIB:tick.sibling[0-9]*]], !dbg [[L2]]{{$}}
; desc's function -> a finished sibling: pop it (rule 2c); another function -> cold
; CHECK:       [[SIB]]:
; CHECK-NEXT:    [[DFA:%.*]] = getelementptr inbounds i8, ptr [[D]], i64 [[#DESC_FUNCTION]], !dbg [[L2]]
; CHECK-NEXT:    [[DF:%.*]] = load ptr, ptr [[DFA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[FN:%.*]] = load ptr, ptr getelementptr inbounds (i8, ptr @desc, i64 [[#DESC_FUNCTION]]), align 8, !dbg [[L2]]
; CHECK-NEXT:    [[SAMEF:%.*]] = icmp eq ptr [[DF]], [[FN]], !dbg [[L2]]
; CHECK-NEXT:    br i1 [[SAMEF]], label %[[STEP:tick.step[0-9]*]], label %[[TCOLD]], !dbg [[L2]], !prof [[ELSE_COLD]]
; CHECK:       [[STEP]]:
; CHECK-NEXT:    [[C:%.*]] = getelementptr inbounds i8, ptr [[AT]], i64 [[#ENTRY_REPEATS]], !dbg [[L2]]
; CHECK-NEXT:    store i64 0, ptr [[C]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[C:%.*]] = getelementptr inbounds i8, ptr [[AT]], i64 [[#ENTRY_FLAGS]], !dbg [[L2]]
; CHECK-NEXT:    store i64 0, ptr [[C]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[BELOW]] = getelementptr inbounds i8, ptr [[AT]], i64 -[[#ENTRY_SIZE]], !dbg [[L2]]
; CHECK-NEXT:    [[BWA:%.*]] = getelementptr inbounds i8, ptr [[BELOW]], i64 [[#ENTRY_WM]], !dbg [[L2]]
; CHECK-NEXT:    [[BWM:%.*]] = load i64, ptr [[BWA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[BSAME:%.*]] = icmp eq i64 [[BWM]], %sp, !dbg [[L2]]
; CHECK-NEXT:    br i1 [[BSAME]], label %[[NEXT]], label %[[ROOM]], !dbg [[L2]]{{$}}
; the entry below is at sp too: desc -> it runs again (its tail flag cleared), and is
; the top; else the walk goes on
; CHECK:       [[NEXT]]:
; CHECK-NEXT:    [[D1:%.*]] = load ptr, ptr [[BELOW]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[AG:%.*]] = icmp eq ptr [[D1]], @desc, !dbg [[L2]]
; CHECK-NEXT:    br i1 [[AG]], label %[[POPPED:tick.popped[0-9]*]], label %[[OTHER]], !dbg [[L2]]{{$}}
; CHECK:       [[POPPED]]:
; CHECK-NEXT:    [[FA:%.*]] = getelementptr inbounds i8, ptr [[BELOW]], i64 [[#ENTRY_FLAGS]], !dbg [[L2]]
; CHECK-NEXT:    [[FL:%.*]] = load i32, ptr [[FA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[FL1:%.*]] = and i32 [[FL]], -2, !dbg [[L2]]
; CHECK-NEXT:    store i32 [[FL1]], ptr [[FA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    store atomic ptr [[BELOW]], ptr [[H]] release, align 8, !dbg [[L2]]
; CHECK:         add i64 {{%.*}}, 1, !dbg [[L2]]
; CHECK:         br label %[[TCONT]], !dbg [[L2]]
; the push on an enclosing entry, or on what the pops left (rule 3)
; CHECK:       [[ROOM]]:
; CHECK-NEXT:    [[BASE:%.*]] = phi ptr [ [[BELOW]], %[[STEP]] ], [ [[AT]], %[[OTHER]] ], !dbg [[L2]]
; CHECK:         [[HASROOM:%.*]] = icmp ult ptr [[BASE]], {{%.*}}, !dbg [[L2]]
; CHECK-NEXT:    br i1 [[HASROOM]], label %[[PUSHON:tick.push_on[0-9]*]], label %[[TCOLD]], !dbg [[L2]], !prof [[ELSE_COLD]]
; CHECK:       [[PUSHON]]:
; CHECK:         store ptr @desc, ptr {{%.*}}, align 8, !dbg [[L2]]
; CHECK:         store i64 %sp, ptr {{%.*}}, align 8, !dbg [[L2]]
; CHECK-NEXT:    [[N:%.*]] = getelementptr inbounds i8, ptr [[BASE]], i64 [[#ENTRY_SIZE]], !dbg [[L2]]
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
; CHECK-NEXT:    br i1 [[STALE]], label %[[PONE:pop.one[0-9]*]], label %[[PCONT:pop.cont[0-9]*]], !dbg [[L3]], !prof [[THEN_COLD:![0-9]+]]
; CHECK:       [[PONE]]:
; CHECK:         icmp ult i64 {{%.*}}, %sp.up, !dbg [[L3]]
; CHECK:         br i1 {{%.*}}, label %[[PMORE:pop.more[0-9]*]], label %[[PSET:pop.set[0-9]*]], !dbg [[L3]]
; CHECK:       [[PSET]]:
; CHECK:         store atomic ptr {{%.*}}, ptr [[H]] release, align 8, !dbg [[L3]]
; CHECK-NEXT:    br label %[[PCONT]], !dbg [[L3]]
; CHECK:       [[PCONT]]:
; CHECK-NEXT:    %k = load ptr, ptr %Sp.up, align 8, !dbg [[L3]]
; CHECK-NEXT:    musttail call ghccc void %k(ptr %Base, ptr %Sp.up, ptr %Hp, i64 %R1), !dbg [[L3]]
; CHECK-NEXT:    ret void
; The cold block, at the end: the tick's slow path through its trampoline, then back.
; CHECK:       [[TCOLD]]:
; CHECK-NEXT:    call void asm sideeffect "call strobe_tick_cold@PLT", "{rax},{rdx},~{r10},~{r11},~{memory},~{dirflag},~{fpsr},~{flags}"(ptr @desc, i64 %sp), !dbg [[L2]]
; CHECK-NEXT:    br label %[[TCONT]], !dbg [[L2]]
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

; No C declaration of a slow path; the intrinsics' declarations are gone.  The
; function gets noredzone: the trampoline's call pushes below rsp.
; CHECK-NOT: declare void @strobe_
; CHECK-DAG: attributes [[ATTRS]] = { noredzone nounwind "strobe-instrument" "strobe-name"="Main.fact" }
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
