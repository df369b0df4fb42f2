/*
 * Libraries loaded on first use (see dynlib.h).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/dynlib.h"

/* One lock for all libraries: loading happens a handful of times per process. */
static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
    const char *soname, *instead;
} redirects[8];

void icd_dynlib_test_redirect(const char *soname, const char *instead)
{
    for (size_t i = 0; i < sizeof redirects / sizeof redirects[0]; i++)
        if (!redirects[i].soname || !strcmp(redirects[i].soname, soname)) {
            redirects[i].soname = soname;
            redirects[i].instead = instead;
            return;
        }
}

static const char *file_to_open(const char *soname)
{
    for (size_t i = 0; i < sizeof redirects / sizeof redirects[0] && redirects[i].soname; i++)
        if (!strcmp(redirects[i].soname, soname)) return redirects[i].instead;
    return soname;
}

/* dlerror()'s text, or a stand-in when it has none. */
static const char *dl_reason(void)
{
    const char *e = dlerror();
    return e && e[0] ? e : "no reason given";
}

/* Opens the library and fills every slot; on failure fills lib->error and sets no slot. */
static int load_locked(icd_dynlib *lib)
{
    const char *path = file_to_open(lib->soname);
    (void)dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(lib->error, sizeof lib->error,
                 "cannot load %s (needed for %s): %s; install the Debian package %s", lib->soname,
                 lib->purpose, dl_reason(), lib->package);
        return -1;
    }
    void *addr[64];
    if (lib->nsyms > sizeof addr / sizeof addr[0]) {
        snprintf(lib->error, sizeof lib->error, "%s: too many symbols (%zu) for the loader",
                 lib->soname, lib->nsyms);
        dlclose(h);
        return -1;
    }
    for (size_t i = 0; i < lib->nsyms; i++) {
        (void)dlerror();
        addr[i] = dlsym(h, lib->syms[i].name);
        if (!addr[i]) {
            snprintf(lib->error, sizeof lib->error,
                     "cannot use %s (needed for %s): it has no symbol %s (%s); install the "
                     "Debian package %s of Debian 12 or later",
                     lib->soname, lib->purpose, lib->syms[i].name, dl_reason(), lib->package);
            dlclose(h);
            return -1;
        }
    }
    /* All or nothing. The handle stays open for the life of the process. POSIX guarantees
     * that a function pointer has the size and representation of a void *. */
    for (size_t i = 0; i < lib->nsyms; i++)
        memcpy(lib->syms[i].slot, &addr[i], sizeof addr[i]);
    return 0;
}

int icd_dynlib_load(icd_dynlib *lib, icd_error *err)
{
    int state = atomic_load_explicit(&lib->state, memory_order_acquire);
    if (state == 0) {
        pthread_mutex_lock(&load_mu);
        state = atomic_load_explicit(&lib->state, memory_order_relaxed);
        if (state == 0) {
            state = load_locked(lib) == 0 ? 1 : -1;
            atomic_store_explicit(&lib->state, state, memory_order_release);
        }
        pthread_mutex_unlock(&load_mu);
    }
    if (state > 0) return 0;
    return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "%s", lib->error);
}
