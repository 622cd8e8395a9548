# lib/runner: the processes and directories of hostrangectl's commands
# that run others (record, record --rounds, ab, bisect): the registry that
# stops and removes them on every way out, signals included, and the
# processes started through it. Used by hostrangectl alone.
noinst_LTLIBRARIES += lib/runner/libhrrunner.la
lib_runner_libhrrunner_la_SOURCES = lib/runner/cleanup.c lib/runner/cleanup.h
# The processes themselves: a child started with its streams, directory
# and environment; a private daemon, this program again, git.
lib_runner_libhrrunner_la_SOURCES += lib/runner/spawn.c lib/runner/spawn.h
# record --rounds: the rounds run, each by the caller's callback.
lib_runner_libhrrunner_la_SOURCES += lib/runner/rounds.c lib/runner/rounds.h
# bisect's measuring: the ends, the steps and the search, the builds and
# rounds done through the caller's callbacks.
lib_runner_libhrrunner_la_SOURCES += lib/runner/bisect.c lib/runner/bisect.h
# bisect's commits in git: the line, a worktree per commit, its build.
lib_runner_libhrrunner_la_SOURCES += lib/runner/worktree.c \
	lib/runner/worktree.h
lib_runner_libhrrunner_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
EXTRA_DIST += lib/runner/local.mk
