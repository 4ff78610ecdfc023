/* SPDX-License-Identifier: MIT */
/*
 * topocoll/export.h - TC_API, the mark of every function of the public
 * interface.
 *
 * The library is built with symbols hidden by default (meson's
 * gnu_symbol_visibility: 'hidden'): only what a public header declares with
 * TC_API is exported from libtopocoll.so; the internal tc__ functions are
 * not.  A program that includes the headers sees TC_API as nothing more
 * than a visibility attribute on a declaration, in C or C++.
 */
#ifndef TOPOCOLL_EXPORT_H
#define TOPOCOLL_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define TC_API __attribute__((visibility("default")))
#else
#define TC_API
#endif

#endif /* TOPOCOLL_EXPORT_H */
