// The one function is `static inline` in include/prefetch.h (inlined into Swift through the
// module); SwiftPM needs a source file to build the target.
#include "prefetch.h"
