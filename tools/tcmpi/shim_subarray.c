/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_subarray.c - (being written)
 */
#include "shim.h"
