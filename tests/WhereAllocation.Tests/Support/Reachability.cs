using System;

namespace WhereAllocation.Tests
{
    /// <summary>Whether objects a test let go of can be collected.</summary>
    public static class Reachability
    {
        /// <summary>
        /// How many of <paramref name="references"/> are still alive after up to ten rounds of full collections with the
        /// finalizers run between them (a finalizer may be what lets an object go).
        /// </summary>
        public static int CountAlive(WeakReference[] references)
        {
            int alive = references.Length;
            for (int round = 0; round < 10 && alive > 0; round++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
                GC.Collect();
                alive = 0;
                foreach (WeakReference reference in references)
                    if (reference.IsAlive) alive++;
            }
            return alive;
        }
    }
}
