/*
 * A program marked with NVTX only (no hostrange.h), for the NVTX tool's
 * service tests: `nvtx_prog MODE [ARG]...`, each mode a known set of
 * ranges (the expected counts are in tests/service/test_nvtx.sh).
 *
 *   nested N        N times: "outer" around two "inner", each around one
 *                   "leaf"
 *   domains         the domain "dom": 5 pushes of a registered string
 *                   "reg", 3 of an ASCII "asc"; 2 default-domain pushes of
 *                   the wide "wide"; 4 marks; a domain and a string
 *                   registered again
 *   threads N       N start/end ranges "handoff" started here and ended on
 *                   another thread, and N "local" ones on this thread
 *   libs A.so B.so  loads two shared objects, each with its own NVTX, and
 *                   calls their work() 3 times each
 *   fork            "parent" twice, then a child that runs "child" twice
 *                   and "parent" once; waits for it
 *   window N        N "before", then "step" around N "inside", then N
 *                   "after"
 *   plain N         N "plain" (prints "done" on stdout at the end)
 *   long N          N times: "ok.outer" around two messages of 5,000 bytes
 *                   (2,500 x U+00E9, and 2,499 of them then "xx"), over
 *                   the limit of a name
 */
#include <dlfcn.h>
#include <nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void nested(int n)
{
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("outer");
        for (int j = 0; j < 2; j++) {
            nvtxRangePushA("inner");
            nvtxRangePushA("leaf");
            nvtxRangePop();
            nvtxRangePop();
        }
        nvtxRangePop();
    }
}

static nvtxEventAttributes_t attr(void)
{
    nvtxEventAttributes_t a;

    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    return a;
}

static void domains(void)
{
    nvtxDomainHandle_t d = nvtxDomainCreateA("dom");
    nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "reg");
    nvtxEventAttributes_t a = attr();

    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    for (int i = 0; i < 5; i++) {
        nvtxDomainRangePushEx(d, &a);
        nvtxDomainRangePop(d);
    }
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "asc";
    for (int i = 0; i < 3; i++) {
        nvtxDomainRangePushEx(d, &a);
        nvtxDomainMarkEx(d, &a);
        nvtxDomainRangePop(d);
    }
    for (int i = 0; i < 2; i++) {
        nvtxRangePushW(L"wide");
        nvtxRangePop();
    }
    nvtxMarkA("mark");
    /* Registered again (as a second library would): the same names. */
    d = nvtxDomainCreateA("dom");
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = nvtxDomainRegisterStringA(d, "reg");
    nvtxDomainRangePushEx(d, &a);
    nvtxDomainRangePop(d);
    nvtxDomainDestroy(d);
}

static nvtxRangeId_t *ids;
static int nids;

static void *ender(void *arg)
{
    (void)arg;
    nvtxNameOsThreadA(0, "ender");
    for (int i = 0; i < nids; i++)
        nvtxRangeEnd(ids[i]);
    return NULL;
}

static int threads(int n)
{
    pthread_t th;

    ids = calloc((size_t)n, sizeof *ids);
    if (ids == NULL)
        return 1;
    nids = n;
    for (int i = 0; i < n; i++)
        ids[i] = nvtxRangeStartA("handoff");
    if (pthread_create(&th, NULL, ender, NULL) != 0)
        return 1;
    pthread_join(th, NULL);
    for (int i = 0; i < n; i++)
        nvtxRangeEnd(nvtxRangeStartA("local"));
    free(ids);
    return 0;
}

static int libs(const char *a, const char *b)
{
    const char *paths[2] = { a, b };

    for (int i = 0; i < 2; i++) {
        void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        void (*work)(void);

        if (h == NULL) {
            fprintf(stderr, "nvtx_prog: %s\n", dlerror());
            return 1;
        }
        *(void **)&work = dlsym(h, "nvtx_lib_work");
        if (work == NULL)
            return 1;
        for (int j = 0; j < 3; j++)
            work();
    }
    nvtxRangePushA("main");
    nvtxRangePop();
    return 0;
}

static int forked(void)
{
    int status;
    pid_t pid;

    for (int i = 0; i < 2; i++) {
        nvtxRangePushA("parent");
        nvtxRangePop();
    }
    pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        for (int i = 0; i < 2; i++) {
            nvtxRangePushA("child");
            nvtxRangePop();
        }
        nvtxRangePushA("parent");
        nvtxRangePop();
        exit(0);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return 1;
    return 0;
}

static void window(int n)
{
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("before");
        nvtxRangePop();
    }
    nvtxRangePushA("step");
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("inside");
        nvtxRangePop();
    }
    nvtxRangePop();
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("after");
        nvtxRangePop();
    }
}

static void long_names(int n)
{
    char a[5001], b[5001];

    for (int i = 0; i < 2500; i++)
        memcpy(a + 2 * i, "\xc3\xa9", 2);
    a[5000] = '\0';
    memcpy(b, a, 4998);
    memcpy(b + 4998, "xx", 3);
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("ok.outer");
        nvtxRangePushA(a);
        nvtxRangePop();
        nvtxRangePushA(b);
        nvtxRangePop();
        nvtxRangePop();
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int n = argc > 2 ? atoi(argv[2]) : 10;

    if (strcmp(mode, "nested") == 0) {
        nested(n);
        return 0;
    }
    if (strcmp(mode, "domains") == 0) {
        domains();
        return 0;
    }
    if (strcmp(mode, "threads") == 0)
        return threads(n);
    if (strcmp(mode, "libs") == 0 && argc == 4)
        return libs(argv[2], argv[3]);
    if (strcmp(mode, "fork") == 0)
        return forked();
    if (strcmp(mode, "window") == 0) {
        window(n);
        return 0;
    }
    if (strcmp(mode, "long") == 0) {
        long_names(n);
        return 0;
    }
    if (strcmp(mode, "plain") == 0) {
        for (int i = 0; i < n; i++) {
            nvtxRangePushA("plain");
            nvtxRangePop();
        }
        puts("done");
        return 0;
    }
    fprintf(stderr, "usage: nvtx_prog nested|domains|threads|libs|fork|"
            "window|plain|long [ARG]...\n");
    return 2;
}
