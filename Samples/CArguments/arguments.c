#include "CArguments.h"

#include <stddef.h>
#include <stdlib.h>

/// `argc` as glibc passed it to `wattle_keep_arguments`; 0 until then (or with another C library).
static int savedCount;
/// `argv` as glibc passed it (the process's own vector, which lives as long as the process).
static char **savedVector;
/// What `wattle_arguments` returns when nothing was kept: no arguments, NULL-terminated.
static char *emptyVector[] = { NULL };

#if defined(__GLIBC__)
/// glibc calls every function of an object's `.init_array` with `(argc, argv, envp)`, before
/// `main`; priority 101 (up to 100 are reserved for the implementation) runs it before this
/// program's other constructors, the statically linked Swift runtime's among them. Other C
/// libraries may pass nothing (musl does), so the constructor exists only with glibc.
__attribute__((constructor(101)))
static void wattle_keep_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc > 0 && argv != NULL) {
        savedCount = argc;
        savedVector = argv;
    }
}
#endif

char *_Nullable const *_Nonnull wattle_arguments(int *_Nonnull count) {
    if (savedVector == NULL) {
        *count = 0;
        return emptyVector;
    }
    *count = savedCount;
    return savedVector;
}

#if defined(__linux__) && defined(__GLIBC__) && __has_attribute(swiftcall)
/// What `CommandLine.arguments` asks the runtime for, answered from the vector kept above.
///
/// In a build with `--static-swift-stdlib`, libswiftCore is an archive: the linker takes its
/// CommandLine.cpp member, and with it the `/proc/self/maps` reader, only to define this symbol.
/// Defined here first, the member stays out. The definition is weak, so if another symbol of that
/// member is ever needed, the runtime's own definition wins and nothing breaks (the reader then
/// runs as before). With the shared runtime this symbol is internal to libswiftCore.so, which
/// keeps using its own: this one is then unused.
__attribute__((weak, swiftcall, visibility("hidden")))
char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    return (char **)wattle_arguments(outArgLen);
}
#endif
