/*
 * Readiness and status notifications to a service manager. Built with
 * libsystemd (configure --with-systemd) they are sd_notify messages, so the
 * unit can be Type=notify; without it they do nothing.
 */
#ifndef HOSTRANGE_NOTIFY_H
#define HOSTRANGE_NOTIFY_H

/* The daemon serves its sockets. */
void hrd_notify_ready(const char *status);

/* The daemon is stopping (state is being written). */
void hrd_notify_stopping(void);

#endif
