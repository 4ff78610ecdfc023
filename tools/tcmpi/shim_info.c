/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_info.c - (being written)
 */
#include "shim.h"
