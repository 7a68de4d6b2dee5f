; RUN: opt -load-pass-plugin=%strobe_plugin -passes=strobe-instrument,verify -S %s | FileCheck %s
; How much of the walk down the entries at the tick's depth the inline tick does
; depends on what the plugin knows of the descriptor (dynstack.h §4):
;  - a constant descriptor flagged STROBE_DESC_NESTED: its whole constant parent
;    chain is compared (rule 2b), then siblings are popped (rule 2c);
;  - flagged, with no parent: nothing contains it; siblings are popped;
;  - not flagged (its function's spans do not nest), or not a constant: only the
;    repeat (rule 2a) is inline, anything else at its depth goes to the runtime.
target triple = "x86_64-pc-linux-gnu"

@f = private unnamed_addr constant [7 x i8] c"Main.f\00"
@file = private unnamed_addr constant [5 x i8] c"F.hs\00"
@top = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { i32 1, i32 1, i32 1, i32 9, i32 9, i32 1, ptr @f, ptr @file, ptr null, ptr null }, section "strobe_ticks", align 8
@mid = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { i32 1, i32 2, i32 1, i32 8, i32 9, i32 1, ptr @f, ptr @file, ptr null, ptr @top }, section "strobe_ticks", align 8
@leaf = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { i32 1, i32 3, i32 1, i32 3, i32 9, i32 1, ptr @f, ptr @file, ptr null, ptr @mid }, section "strobe_ticks", align 8
@odd = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { i32 1, i32 3, i32 1, i32 3, i32 9, i32 0, ptr @f, ptr @file, ptr null, ptr @mid }, section "strobe_ticks", align 8

declare void @strobe.tick(ptr, i64)

; CHECK-LABEL: define void @tick_leaf(
; CHECK:       tick.other:
; CHECK-NEXT:    %dyn.at = phi
; CHECK-NEXT:    %dyn.at.desc = load ptr, ptr %dyn.at,
; CHECK-NEXT:    [[A:%.*]] = icmp eq ptr %dyn.at.desc, @mid
; CHECK-NEXT:    [[B:%.*]] = icmp eq ptr %dyn.at.desc, @top
; CHECK-NEXT:    [[E:%.*]] = or i1 [[A]], [[B]]
; CHECK-NEXT:    br i1 [[E]], label %tick.room, label %tick.sibling
; CHECK:       tick.sibling:
; CHECK:         br i1 %dyn.same_function, label %tick.step, label %tick.cold
define void @tick_leaf(i64 %sp) "strobe-instrument" {
  call void @strobe.tick(ptr @leaf, i64 %sp)
  ret void
}

; CHECK-LABEL: define void @tick_top(
; CHECK:       tick.other:
; CHECK-NEXT:    %dyn.at = phi
; CHECK-NEXT:    %dyn.at.desc = load ptr, ptr %dyn.at,
; CHECK-NEXT:    br label %tick.sibling
; CHECK:       tick.sibling:
; CHECK:         br i1 %dyn.same_function, label %tick.step, label %tick.cold
define void @tick_top(i64 %sp) "strobe-instrument" {
  call void @strobe.tick(ptr @top, i64 %sp)
  ret void
}

; CHECK-LABEL: define void @tick_odd(
; CHECK:       tick.top:
; CHECK:         br i1 %dyn.again, label %tick.repeat, label %tick.cold
; CHECK-NOT:   tick.other
; CHECK-NOT:   tick.sibling
; CHECK-NOT:   tick.step
; CHECK:       }
define void @tick_odd(i64 %sp) "strobe-instrument" {
  call void @strobe.tick(ptr @odd, i64 %sp)
  ret void
}

; CHECK-LABEL: define void @unknown(
; CHECK:       tick.top:
; CHECK:         br i1 %dyn.again, label %tick.repeat, label %tick.cold
; CHECK-NOT:   tick.other
; CHECK-NOT:   tick.sibling
; CHECK:       }
define void @unknown(ptr %desc, i64 %sp) "strobe-instrument" {
  call void @strobe.tick(ptr %desc, i64 %sp)
  ret void
}
