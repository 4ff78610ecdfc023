/* SPDX-License-Identifier: MIT */
/* A file of the model layer that includes a header of the coll layer, above
 * it: check_layers.py must reject this folder (test check_layers_catches). */
#include "coll/gen.h"
