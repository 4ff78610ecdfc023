/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_attr.c - (being written)
 */
#include "shim.h"
