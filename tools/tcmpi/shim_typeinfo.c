/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_typeinfo.c - (being written)
 */
#include "shim.h"
