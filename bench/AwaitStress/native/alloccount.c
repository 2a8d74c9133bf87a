/*
 * alloccount: a Mono profiler module that counts the bytes of every managed object the process allocates, on every
 * thread, with either collector (SGen, Boehm). Mono 6.8 has no whole-process allocation counter of its own
 * (GC.GetTotalAllocatedBytes does not exist there), and AwaitStress needs one: its awaits complete on the library's
 * I/O thread or on the thread pool.
 *
 * Loaded by the runtime:  LD_LIBRARY_PATH=<dir of this .so> mono --profile=alloccount AwaitStress.dll ...
 * Read by the program:    [DllImport("mono-profiler-alloccount")] long alloccount_bytes();  (the same file, so the
 *                         same copy and count; without --profile, alloccount_loaded() says 0 and nothing counts).
 * Built by run.sh:        cc -O2 -shared -fPIC -I/usr/include/mono-2.0 -o libmono-profiler-alloccount.so alloccount.c
 *
 * Turning allocation events on makes Mono take its slower, instrumented allocation path for every object: the module
 * changes how fast a program that allocates runs, not what it allocates.
 */
#include <stdint.h>
#include <mono/metadata/object.h>
#include <mono/metadata/profiler.h>

struct _MonoProfiler {
    int unused;
};

static struct _MonoProfiler profiler;
static int64_t allocated_bytes;
static int64_t allocated_objects;
static int loaded;

static void on_allocation(MonoProfiler *prof, MonoObject *object)
{
    (void)prof;
    __atomic_fetch_add(&allocated_bytes, (int64_t)mono_object_get_size(object), __ATOMIC_RELAXED);
    __atomic_fetch_add(&allocated_objects, 1, __ATOMIC_RELAXED);
}

/* Bytes of the managed objects allocated since the runtime started. */
int64_t alloccount_bytes(void)
{
    return __atomic_load_n(&allocated_bytes, __ATOMIC_ACQUIRE);
}

/* Managed objects allocated since the runtime started. */
int64_t alloccount_objects(void)
{
    return __atomic_load_n(&allocated_objects, __ATOMIC_ACQUIRE);
}

/* 1 when Mono loaded the module as a profiler (and so calls it for every allocation), else 0. */
int alloccount_loaded(void)
{
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

/* Mono's entry point for --profile=alloccount. */
void mono_profiler_init_alloccount(const char *options)
{
    (void)options;
    MonoProfilerHandle handle = mono_profiler_create(&profiler);
    if (!mono_profiler_enable_allocations())
        return; /* too late to instrument allocations: nothing would be counted, so say not loaded */
    mono_profiler_set_gc_allocation_callback(handle, on_allocation);
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}
