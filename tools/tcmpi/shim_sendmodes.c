/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_sendmodes.c - (being written)
 */
#include "shim.h"
