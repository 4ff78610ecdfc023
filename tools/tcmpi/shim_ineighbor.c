/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_ineighbor.c - (being written)
 */
#include "shim.h"
