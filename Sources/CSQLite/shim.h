#ifndef WATTLE_CSQLITE_SHIM_H
#define WATTLE_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
