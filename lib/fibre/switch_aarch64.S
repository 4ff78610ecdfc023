/* SPDX-License-Identifier: MIT */
/*
 * lib/fibre/switch_aarch64.S - the fibre switch for AArch64, AAPCS64.
 *
 * void tc__fibre_jump(void **save_sp, void *load_sp)
 *   x0 = save_sp, x1 = load_sp.
 *
 * What is saved: the callee-saved registers of AAPCS64 (x19-x28, the frame
 * pointer x29, the link register x30 which holds the return address, and
 * the low 64 bits of v8-v15, i.e. d8-d15), the stack pointer (into
 * *save_sp) and FPCR (rounding mode, flush-to-zero, default NaN: the
 * control state; FPSR's cumulative flags are not switched).  The saved
 * context, 176 bytes from the saved sp upwards (sp stays 16-byte aligned):
 *
 *   sp+0    x19 x20 x21 x22 x23 x24 x25 x26 x27 x28
 *   sp+80   x29 x30
 *   sp+96   d8 d9 d10 d11 d12 d13 d14 d15
 *   sp+160  FPCR, 8 bytes unused
 *
 * A new fibre's stack is laid out the same way by tc__fibre_create()
 * (lib/fibre/fibre.c): x30 = tc__fibre_start, x19 = the fibre, x20 = the
 * C entry function, x29 = 0.
 *
 * Not handled: pointer authentication of x30 (the build does not sign
 * return addresses across this routine: it is not compiled with
 * -mbranch-protection) and SVE state beyond d8-d15 (caller-saved).
 */
	.text
	.globl	tc__fibre_jump
	.hidden	tc__fibre_jump
	.type	tc__fibre_jump, %function
	.p2align 4
tc__fibre_jump:
	.cfi_startproc
	sub	sp, sp, #176
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #80]
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	mrs	x9, fpcr
	str	x9, [sp, #160]
	mov	x9, sp
	str	x9, [x0]
	mov	sp, x1
	ldr	x9, [sp, #160]
	msr	fpcr, x9
	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	add	sp, sp, #176
	ret
	.cfi_endproc
	.size	tc__fibre_jump, .-tc__fibre_jump

/* First code of every fibre, reached by the ret above: calls x20(x19) and
 * never returns (the entry ends with tc__fibre_exit). */
	.globl	tc__fibre_start
	.hidden	tc__fibre_start
	.type	tc__fibre_start, %function
	.p2align 4
tc__fibre_start:
	.cfi_startproc
	.cfi_undefined x30
	mov	x0, x19
	blr	x20
	brk	#0
	.cfi_endproc
	.size	tc__fibre_start, .-tc__fibre_start

	.section .note.GNU-stack, "", %progbits
