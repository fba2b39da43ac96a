#ifndef FRESHET_CSQLITE_SHIM_H
#define FRESHET_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
