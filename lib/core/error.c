/* SPDX-License-Identifier: MIT */
#include "topocoll/error.h"

const char *tc_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
#define TC__ERR_MSG(name, val, msg)                                                  \
	case (val):                                                                  \
		return msg;
		TC_ERRNO_MAP(TC__ERR_MSG)
#undef TC__ERR_MSG
	default:
		return "unknown error";
	}
}

const char *tc_err_name(int err)
{
	switch (err) {
	case 0:
		return "TC_OK";
#define TC__ERR_NAME(name, val, msg)                                                 \
	case (val):                                                                  \
		return "TC_" #name;
		TC_ERRNO_MAP(TC__ERR_NAME)
#undef TC__ERR_NAME
	default:
		return "TC_E?";
	}
}
