using Xunit;

// Tests one at a time, as in the sockets suite: allocation is measured per thread (under Boehm process-wide), and the
// dispose races start threads of their own.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
