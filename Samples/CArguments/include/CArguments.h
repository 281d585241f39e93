/// The process's arguments as glibc hands them to ELF constructors, for the `wattle` CLI.
///
/// Swift's runtime finds `argv` on Linux with a static constructor (`ArgvGrabber`, in the
/// stdlib's CommandLine.cpp) that reads all of `/proc/self/maps` to locate the stack: ~0.3 ms of
/// kernel time for a process that maps libcurl's ~20 libraries, every time the CLI starts.
/// glibc passes `argc` and `argv` to every constructor, so this file keeps them from its own.
#ifndef WATTLE_CARGUMENTS_H
#define WATTLE_CARGUMENTS_H

/// The `argv` glibc passed to this module's constructor, with its count in `count`; an empty
/// vector (count 0) if the constructor did not receive them (a C library that passes none).
char *_Nullable const *_Nonnull wattle_arguments(int *_Nonnull count);

#endif
