/* SPDX-License-Identifier: MIT */
/*
 * The engine version: the release in the Makefile's VERSION plus, in a git
 * checkout, `git describe` of the commit built ("0.2.0+g1a2b3c4", with
 * "-dirty" for uncommitted changes). The build writes it into a generated
 * file, so every command and every stored run names the same version.
 */
#ifndef VERSION_H
#define VERSION_H

/* The version text, e.g. "0.2.0+g1a2b3c4". Can't fail. */
const char *version_string(void);

#endif /* VERSION_H */
