; RUN: opt -load-pass-plugin=%strobe_plugin -passes=strobe-instrument -S %s \
; RUN:   | FileCheck %s --implicit-check-not=strobe.tick --implicit-check-not=strobe.pop \
; RUN:       --implicit-check-not=strobe.ret
; RUN: opt -load-pass-plugin=%strobe_plugin -passes=strobe-instrument,verify -disable-output %s
; Each intrinsic of an instrumented function becomes the inline fast path of strobe/
; dynstack.h: the cache through one llvm.threadlocal.address, the compare(s), a branch
; weighted unlikely to a cold block calling the slow path, and for tick the repeat
; increment; every new instruction keeps the debug location of the call it replaces.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@.str.fact = private unnamed_addr constant [10 x i8] c"Main.fact\00"
@.str.file = private unnamed_addr constant [8 x i8] c"Fact.hs\00"
@desc = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr } { i32 1, i32 15, i32 10, i32 15, i32 25, i32 0, ptr @.str.fact, ptr @.str.file, ptr null }, section "strobe_ticks", align 8

declare void @strobe.tick(ptr, i64)
declare void @strobe.pop(i64)
declare void @strobe.ret(i64)

; CHECK: @strobe_dynstack_cache = external thread_local(initialexec) global { i64, ptr, ptr, ptr }, align 8

; CHECK-LABEL: define ghccc void @Main_fact_info(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %sp = ptrtoint ptr %Sp to i64, !dbg [[L1:![0-9]+]]
; ret(sp): top_wm <=u sp -> cold
; CHECK-NEXT:    [[C:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @strobe_dynstack_cache), !dbg [[L1]]
; CHECK-NEXT:    [[WM:%.*]] = load i64, ptr [[C]], align 8, !dbg [[L1]]
; CHECK-NEXT:    [[STALE:%.*]] = icmp ule i64 [[WM]], %sp, !dbg [[L1]]
; CHECK-NEXT:    br i1 [[STALE]], label %[[RCOLD:ret.cold[0-9]*]], label %[[RCONT:ret.cont[0-9]*]], !dbg [[L1]], !prof [[THEN_COLD:![0-9]+]]
; CHECK:       [[RCONT]]:
; tick(desc, sp): top_desc == desc & top_wm == sp -> repeats += 1, else cold
; CHECK-NEXT:    [[C:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @strobe_dynstack_cache), !dbg [[L2:![0-9]+]]
; CHECK-NEXT:    [[WM:%.*]] = load i64, ptr [[C]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[DA:%.*]] = getelementptr inbounds i8, ptr [[C]], i64 8, !dbg [[L2]]
; CHECK-NEXT:    [[D:%.*]] = load ptr, ptr [[DA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[SD:%.*]] = icmp eq ptr [[D]], @desc, !dbg [[L2]]
; CHECK-NEXT:    [[SW:%.*]] = icmp eq i64 [[WM]], %sp, !dbg [[L2]]
; CHECK-NEXT:    [[HIT:%.*]] = and i1 [[SD]], [[SW]], !dbg [[L2]]
; CHECK-NEXT:    br i1 [[HIT]], label %[[REPEAT:tick.repeat[0-9]*]], label %[[TCOLD:tick.cold[0-9]*]], !dbg [[L2]], !prof [[ELSE_COLD:![0-9]+]]
; CHECK:       [[REPEAT]]:
; CHECK-NEXT:    [[TA:%.*]] = getelementptr inbounds i8, ptr [[C]], i64 16, !dbg [[L2]]
; CHECK-NEXT:    [[TOP:%.*]] = load ptr, ptr [[TA]], align 8, !dbg [[L2]]
; CHECK-NEXT:    [[RA:%.*]] = getelementptr inbounds i8, ptr [[TOP]], i64 16, !dbg [[L2]]
; CHECK-NEXT:    [[R:%.*]] = load atomic i64, ptr [[RA]] monotonic, align 8, !dbg [[L2]]
; CHECK-NEXT:    [[R1:%.*]] = add i64 [[R]], 1, !dbg [[L2]]
; CHECK-NEXT:    store atomic i64 [[R1]], ptr [[RA]] monotonic, align 8, !dbg [[L2]]
; CHECK-NEXT:    br label %[[TCONT:tick.cont[0-9]*]], !dbg [[L2]]
; CHECK:       [[TCONT]]:
; CHECK-NEXT:    %Sp.up = getelementptr inbounds i8, ptr %Sp, i64 16, !dbg [[L3:![0-9]+]]
; CHECK-NEXT:    %sp.up = ptrtoint ptr %Sp.up to i64, !dbg [[L3]]
; pop(sp): top_wm <u sp -> cold
; CHECK-NEXT:    [[C:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @strobe_dynstack_cache), !dbg [[L3]]
; CHECK-NEXT:    [[WM:%.*]] = load i64, ptr [[C]], align 8, !dbg [[L3]]
; CHECK-NEXT:    [[STALE:%.*]] = icmp ult i64 [[WM]], %sp.up, !dbg [[L3]]
; CHECK-NEXT:    br i1 [[STALE]], label %[[PCOLD:pop.cold[0-9]*]], label %[[PCONT:pop.cont[0-9]*]], !dbg [[L3]], !prof [[THEN_COLD]]
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
