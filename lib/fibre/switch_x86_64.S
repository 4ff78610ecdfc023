/* SPDX-License-Identifier: MIT */
/*
 * lib/fibre/switch_x86_64.S - the fibre switch for x86-64, System V ABI.
 *
 * void tc__fibre_jump(void **save_sp, void *load_sp)
 *   rdi = save_sp, rsi = load_sp.
 *
 * What is saved: the callee-saved registers of the System V AMD64 ABI
 * (rbx, rbp, r12-r15), the stack pointer (into *save_sp), the return
 * address (pushed by the call), and the floating-point control state the
 * ABI makes callee-saved: the control bits of MXCSR and the x87 control
 * word (the psABI's register table: MXCSR's status bits and the x87
 * status word are caller-saved, their control parts callee-saved).  So the
 * status bits travel along with MXCSR's control bits here; nothing may
 * rely on them across a switch.  Everything else is
 * caller-saved, so the C caller has already spilled what it needs (the
 * call is opaque to it).  The saved context, from the saved sp upwards:
 *
 *   sp+0   MXCSR (4 bytes), x87 CW (2 bytes), 2 bytes unused
 *   sp+8   r15, r14, r13, r12, rbx, rbp
 *   sp+56  return address
 *
 * A new fibre's stack is laid out the same way by tc__fibre_create()
 * (lib/fibre/fibre.c) with the return address pointing at tc__fibre_start,
 * r12 = the fibre and r13 = the C entry function, rbp = 0; its sp is then
 * 16-byte aligned after the ret, as the call to the entry needs.
 *
 * Not handled: CET shadow stacks (a ret to another stack would fault;
 * the build does not enable them) and AVX-512 mask registers (caller-saved).
 */
	.text
	.globl	tc__fibre_jump
	.hidden	tc__fibre_jump
	.type	tc__fibre_jump, @function
	.p2align 4
tc__fibre_jump:
	.cfi_startproc
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.cfi_endproc
	.size	tc__fibre_jump, .-tc__fibre_jump

/* First code of every fibre, reached by the ret above: calls r13(r12) and
 * never returns (the entry ends with tc__fibre_exit). */
	.globl	tc__fibre_start
	.hidden	tc__fibre_start
	.type	tc__fibre_start, @function
	.p2align 4
tc__fibre_start:
	.cfi_startproc
	.cfi_undefined rip
	movq	%r12, %rdi
	callq	*%r13
	ud2
	.cfi_endproc
	.size	tc__fibre_start, .-tc__fibre_start

	.section .note.GNU-stack, "", @progbits
