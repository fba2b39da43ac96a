#define _GNU_SOURCE
#include "CSpawn.h"
#include <fcntl.h>
#include <unistd.h>

int cspawn_pipe_cloexec(int fds[2]) {
#if defined(__linux__)
    return pipe2(fds, O_CLOEXEC);
#else
    // No pipe2 on Darwin: set the flag right after (the project's runs are on Linux).
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

int cspawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int cspawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
#if defined(__linux__)
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
#else
    (void)actions; (void)from;
    return 0; // Darwin: the descriptors this package opens are close-on-exec.
#endif
}
