; A module shaped like strobec's output: ghccc functions with "strobe-name" attributes and
; DISubprograms, calls of the intrinsics of intrinsics.def, tick descriptors (strobe/
; dynstack.h StrobeTickDesc) in the section strobe_ticks.  The selection tests run it.
;   Main_fact_info      Main.fact    tick, tick, pop in a branch, musttail calls
;   Main_fact_ret_info  Main.fact    a continuation: ret, tick, pop
;   Main_helper_info    Main.helper  tick, pop
;   Main_main_info      Main.main    "strobe-instrument": tick, pop
;   Main_fact2_info     (no strobe-name: its DISubprogram's name, Main.fact2) tick
;   Main_loop_info      Main.loop    a tick in a loop whose header has a phi
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@.str.fact = private unnamed_addr constant [10 x i8] c"Main.fact\00"
@.str.file = private unnamed_addr constant [8 x i8] c"Fact.hs\00"
@desc.0 = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr } { i32 1, i32 15, i32 10, i32 15, i32 25, i32 0, ptr @.str.fact, ptr @.str.file, ptr null }, section "strobe_ticks", align 8
@desc.1 = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr } { i32 1, i32 16, i32 3, i32 16, i32 9, i32 0, ptr @.str.fact, ptr @.str.file, ptr null }, section "strobe_ticks", align 8
@desc.2 = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr } { i32 1, i32 17, i32 3, i32 17, i32 9, i32 0, ptr @.str.fact, ptr @.str.file, ptr null }, section "strobe_ticks", align 8

declare void @strobe.tick(ptr, i64)
declare void @strobe.pop(i64)
declare void @strobe.ret(i64)

define ghccc void @Main_fact_info(ptr %Base, ptr %Sp, ptr %Hp, i64 %R1) #0 !dbg !10 {
entry:
  %sp = ptrtoint ptr %Sp to i64, !dbg !11
  call void @strobe.tick(ptr @desc.0, i64 %sp), !dbg !11
  %done = icmp eq i64 %R1, 0, !dbg !11
  br i1 %done, label %base, label %rec, !dbg !11

base:
  call void @strobe.tick(ptr @desc.1, i64 %sp), !dbg !12
  %Sp.up = getelementptr inbounds i8, ptr %Sp, i64 8, !dbg !12
  %sp.up = ptrtoint ptr %Sp.up to i64, !dbg !12
  call void @strobe.pop(i64 %sp.up), !dbg !12
  %k = load ptr, ptr %Sp, align 8, !dbg !12
  musttail call ghccc void %k(ptr %Base, ptr %Sp.up, ptr %Hp, i64 1), !dbg !12
  ret void

rec:
  %Sp.down = getelementptr inbounds i8, ptr %Sp, i64 -16, !dbg !13
  store ptr @Main_fact_ret_info, ptr %Sp.down, align 8, !dbg !13
  %R1.next = sub i64 %R1, 1, !dbg !13
  musttail call ghccc void @Main_fact_info(ptr %Base, ptr %Sp.down, ptr %Hp, i64 %R1.next), !dbg !13
  ret void
}

define ghccc void @Main_fact_ret_info(ptr %Base, ptr %Sp, ptr %Hp, i64 %R1) #0 !dbg !20 {
entry:
  %sp = ptrtoint ptr %Sp to i64, !dbg !21
  call void @strobe.ret(i64 %sp), !dbg !21
  call void @strobe.tick(ptr @desc.2, i64 %sp), !dbg !22
  %Sp.up = getelementptr inbounds i8, ptr %Sp, i64 16, !dbg !22
  %sp.up = ptrtoint ptr %Sp.up to i64, !dbg !22
  call void @strobe.pop(i64 %sp.up), !dbg !22
  %k = load ptr, ptr %Sp.up, align 8, !dbg !22
  musttail call ghccc void %k(ptr %Base, ptr %Sp.up, ptr %Hp, i64 %R1), !dbg !22
  ret void
}

define ghccc void @Main_helper_info(ptr %Base, ptr %Sp, ptr %Hp, i64 %R1) #1 !dbg !30 {
entry:
  %sp = ptrtoint ptr %Sp to i64, !dbg !31
  call void @strobe.tick(ptr @desc.0, i64 %sp), !dbg !31
  %Sp.up = getelementptr inbounds i8, ptr %Sp, i64 8, !dbg !31
  %sp.up = ptrtoint ptr %Sp.up to i64, !dbg !31
  call void @strobe.pop(i64 %sp.up), !dbg !31
  %k = load ptr, ptr %Sp, align 8, !dbg !31
  musttail call ghccc void %k(ptr %Base, ptr %Sp.up, ptr %Hp, i64 %R1), !dbg !31
  ret void
}

define ghccc void @Main_main_info(ptr %Base, ptr %Sp, ptr %Hp, i64 %R1) #2 !dbg !40 {
entry:
  %sp = ptrtoint ptr %Sp to i64, !dbg !41
  call void @strobe.tick(ptr @desc.0, i64 %sp), !dbg !41
  %slot = alloca i64, align 8, !dbg !41
  store volatile i64 %R1, ptr %slot, align 8, !dbg !41
  %Sp.up = getelementptr inbounds i8, ptr %Sp, i64 8, !dbg !41
  %sp.up = ptrtoint ptr %Sp.up to i64, !dbg !41
  call void @strobe.pop(i64 %sp.up), !dbg !41
  %k = load ptr, ptr %Sp, align 8, !dbg !41
  musttail call ghccc void %k(ptr %Base, ptr %Sp.up, ptr %Hp, i64 %R1), !dbg !41
  ret void
}

define ghccc void @Main_fact2_info(ptr %Base, ptr %Sp, ptr %Hp, i64 %R1) #4 !dbg !50 {
entry:
  %sp = ptrtoint ptr %Sp to i64, !dbg !51
  call void @strobe.tick(ptr @desc.0, i64 %sp), !dbg !51
  %k = load ptr, ptr %Sp, align 8, !dbg !51
  musttail call ghccc void %k(ptr %Base, ptr %Sp, ptr %Hp, i64 %R1), !dbg !51
  ret void
}

define ghccc void @Main_loop_info(ptr %Base, ptr %Sp, ptr %Hp, i64 %R1) #3 !dbg !60 {
entry:
  %sp = ptrtoint ptr %Sp to i64, !dbg !61
  br label %loop, !dbg !61

loop:
  %n = phi i64 [ %R1, %entry ], [ %n.next, %loop ], !dbg !61
  call void @strobe.tick(ptr @desc.0, i64 %sp), !dbg !61
  %n.next = sub i64 %n, 1, !dbg !61
  %more = icmp ne i64 %n.next, 0, !dbg !61
  br i1 %more, label %loop, label %exit, !dbg !61

exit:
  %k = load ptr, ptr %Sp, align 8, !dbg !61
  musttail call ghccc void %k(ptr %Base, ptr %Sp, ptr %Hp, i64 %n), !dbg !61
  ret void
}

attributes #0 = { nounwind "strobe-name"="Main.fact" }
attributes #1 = { nounwind "strobe-name"="Main.helper" }
attributes #2 = { nounwind "strobe-instrument" "strobe-name"="Main.main" }
attributes #3 = { nounwind "strobe-name"="Main.loop" }
attributes #4 = { nounwind }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}

!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "strobec", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "Fact.hs", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 7, !"Dwarf Version", i32 5}
!4 = !DISubroutineType(types: !{})
!10 = distinct !DISubprogram(name: "Main.fact", scope: !1, file: !1, line: 15, type: !4, scopeLine: 15, spFlags: DISPFlagDefinition, unit: !0)
!11 = !DILocation(line: 15, column: 10, scope: !10)
!12 = !DILocation(line: 16, column: 3, scope: !10)
!13 = !DILocation(line: 17, column: 3, scope: !10)
!20 = distinct !DISubprogram(name: "Main.fact", scope: !1, file: !1, line: 17, type: !4, scopeLine: 17, spFlags: DISPFlagDefinition, unit: !0)
!21 = !DILocation(line: 17, column: 3, scope: !20)
!22 = !DILocation(line: 17, column: 5, scope: !20)
!30 = distinct !DISubprogram(name: "Main.helper", scope: !1, file: !1, line: 20, type: !4, scopeLine: 20, spFlags: DISPFlagDefinition, unit: !0)
!31 = !DILocation(line: 20, column: 1, scope: !30)
!40 = distinct !DISubprogram(name: "Main.main", scope: !1, file: !1, line: 25, type: !4, scopeLine: 25, spFlags: DISPFlagDefinition, unit: !0)
!41 = !DILocation(line: 25, column: 8, scope: !40)
!50 = distinct !DISubprogram(name: "Main.fact2", scope: !1, file: !1, line: 30, type: !4, scopeLine: 30, spFlags: DISPFlagDefinition, unit: !0)
!51 = !DILocation(line: 30, column: 4, scope: !50)
!60 = distinct !DISubprogram(name: "Main.loop", scope: !1, file: !1, line: 35, type: !4, scopeLine: 35, spFlags: DISPFlagDefinition, unit: !0)
!61 = !DILocation(line: 35, column: 2, scope: !60)
