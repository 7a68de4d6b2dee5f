; RUN: opt -load-pass-plugin=%strobe_plugin -passes=strobe-instrument,verify -S %s | FileCheck %s
; Splitting a block after an intrinsic call: the phis of its successors name the new
; block, the moved instructions keep their names and debug locations, and a static
; alloca of the entry block stays there (elsewhere it would be dynamic and give a ghccc
; function a frame pointer).
target triple = "x86_64-pc-linux-gnu"

@desc = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr, ptr } zeroinitializer, section "strobe_ticks", align 8

declare void @strobe.tick(ptr, i64)

; CHECK-LABEL: define ghccc void @loop(
; CHECK:       entry:
; CHECK-NEXT:    %sp = ptrtoint ptr %Sp to i64
; CHECK-NEXT:    %slot = alloca i64, align 8
; CHECK-NEXT:    %dyn.head = call ptr @llvm.threadlocal.address.p0(ptr @strobe_dynstack_head)
; CHECK:         br i1 %dyn.again, label %tick.repeat, label %tick.cold
; CHECK:       tick.cont:
; CHECK-NEXT:    store volatile i64 %R1, ptr %slot, align 8, !dbg [[STORE:![0-9]+]]
; CHECK-NEXT:    br label %loop
; CHECK:       loop:
; CHECK-NEXT:    %n = phi i64 [ %R1, %tick.cont ], [ %n.next, %tick.cont[[N:[0-9]+]] ], [ %n.next, %tick.cont[[N]] ]
; CHECK:       tick.cont[[N]]:
; CHECK-NEXT:    %n.next = sub i64 %n, 1, !dbg [[SUB:![0-9]+]]
; CHECK-NEXT:    %more = icmp ne i64 %n.next, 0
; CHECK-NEXT:    switch i64 %n.next, label %exit [
; CHECK-NEXT:      i64 7, label %loop
; CHECK-NEXT:      i64 8, label %loop
; CHECK-NEXT:    ]
; CHECK:       exit:
; CHECK-NEXT:    %r = phi i64 [ %n, %tick.cont[[N]] ]
; CHECK:       tick.cold:
; CHECK:       tick.cold{{[0-9]+}}:
; CHECK:       [[STORE]] = !DILocation(line: 2,
; CHECK:       [[SUB]] = !DILocation(line: 4,
define ghccc void @loop(ptr %Sp, i64 %R1) "strobe-instrument" !dbg !10 {
entry:
  %sp = ptrtoint ptr %Sp to i64, !dbg !11
  call void @strobe.tick(ptr @desc, i64 %sp), !dbg !11
  %slot = alloca i64, align 8, !dbg !12
  store volatile i64 %R1, ptr %slot, align 8, !dbg !12
  br label %loop, !dbg !12

loop:
  %n = phi i64 [ %R1, %entry ], [ %n.next, %loop ], [ %n.next, %loop ], !dbg !13
  call void @strobe.tick(ptr @desc, i64 %sp), !dbg !13
  %n.next = sub i64 %n, 1, !dbg !14
  %more = icmp ne i64 %n.next, 0, !dbg !14
  switch i64 %n.next, label %exit [ i64 7, label %loop
                                    i64 8, label %loop ], !dbg !14

exit:
  %r = phi i64 [ %n, %loop ], !dbg !14
  ret void, !dbg !14
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2}
!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "strobec", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "Loop.hs", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !DISubroutineType(types: !{})
!10 = distinct !DISubprogram(name: "Main.loop", scope: !1, file: !1, line: 1, type: !4, scopeLine: 1, spFlags: DISPFlagDefinition, unit: !0)
!11 = !DILocation(line: 1, column: 1, scope: !10)
!12 = !DILocation(line: 2, column: 1, scope: !10)
!13 = !DILocation(line: 3, column: 1, scope: !10)
!14 = !DILocation(line: 4, column: 1, scope: !10)
