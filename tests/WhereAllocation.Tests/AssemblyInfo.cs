using Xunit;

// The datagram path is a process-wide setting that tests force, and allocation is measured per
// thread: tests run one at a time.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
