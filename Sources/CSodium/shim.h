#ifndef WATTLE_CSODIUM_SHIM_H
#define WATTLE_CSODIUM_SHIM_H
#include <sodium.h>
#endif
