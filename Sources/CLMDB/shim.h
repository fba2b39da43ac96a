#ifndef FRESHET_CLMDB_SHIM_H
#define FRESHET_CLMDB_SHIM_H
#include <lmdb.h>
#endif
