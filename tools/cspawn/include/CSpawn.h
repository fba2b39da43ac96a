// The GNU extensions of posix_spawn and pipe that ProcessSupport's SpawnedProcess needs.
// Swift's Glibc module is built without _GNU_SOURCE, so it does not see them; these
// wrappers are compiled with it (cspawn.c).
#ifndef CSPAWN_H
#define CSPAWN_H
#include <spawn.h>

/// pipe2(fds, O_CLOEXEC): both ends close on exec, atomically (no other thread's spawn
/// can inherit them between pipe() and fcntl()). 0, or -1 with errno.
int cspawn_pipe_cloexec(int fds[2]);

/// posix_spawn_file_actions_addchdir_np (glibc 2.29): the child changes to `path` before exec.
int cspawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);

/// posix_spawn_file_actions_addclosefrom_np (glibc 2.34): the child closes every
/// descriptor from `from` up before exec.
int cspawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);

#endif
