/// The process's arguments as glibc hands them to ELF constructors, for the `wattle` CLI.
///
/// Swift's runtime finds `argv` on Linux with a static constructor (`ArgvGrabber`, in the
/// stdlib's CommandLine.cpp) that reads all of `/proc/self/maps` to locate the stack: ~0.3 ms of
/// kernel time for a process that maps libcurl's ~30 libraries, every time the CLI starts.
/// glibc passes `argc` and `argv` to every constructor, so this module keeps them from its own.
#ifndef WATTLE_CARGUMENTS_H
#define WATTLE_CARGUMENTS_H

/// The `argv` glibc passed to this module's constructor, with its count in `count`. With another
/// C library (which may call constructors with no arguments), nothing is kept: an empty vector,
/// count 0.
char *_Nullable const *_Nonnull wattle_arguments(int *_Nonnull count);

#endif
