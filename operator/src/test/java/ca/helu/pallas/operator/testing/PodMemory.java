package ca.helu.pallas.operator.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

/**
 * A pod's memory on the real node (e2e/cluster/cluster.sh), read from its cgroup as the kubelet
 * computes a pod's working set: usage less the inactive page cache.
 */
public final class PodMemory {
  private PodMemory() {}

  /** The pod's working set now, in bytes. */
  public static long workingSetBytes(String podUid) throws IOException {
    Path cgroup = cgroupOf(podUid);
    boolean v1 = Files.exists(cgroup.resolve("memory.usage_in_bytes"));
    long usage =
        Long.parseLong(
            Files.readString(cgroup.resolve(v1 ? "memory.usage_in_bytes" : "memory.current"))
                .strip());
    return usage - stat(cgroup, v1 ? "total_inactive_file" : "inactive_file");
  }

  /**
   * Of the pod's working set, the page cache it is charged for in bytes: the pages of files (its
   * image's jar and AOT cache among them) that the kernel charges to the cgroup that read them
   * first, so that of pods of one image starting at once one may carry what all of them map.
   */
  public static long activePageCacheBytes(String podUid) throws IOException {
    Path cgroup = cgroupOf(podUid);
    return stat(
        cgroup,
        Files.exists(cgroup.resolve("memory.usage_in_bytes"))
            ? "total_active_file"
            : "active_file");
  }

  private static long stat(Path cgroup, String key) throws IOException {
    return Files.readAllLines(cgroup.resolve("memory.stat")).stream()
        .filter(l -> l.startsWith(key + " "))
        .mapToLong(l -> Long.parseLong(l.substring(key.length() + 1).strip()))
        .findFirst()
        .orElse(0);
  }

  /**
   * The pods' working sets in MiB once they settle: two reads two seconds apart within 1 MiB of
   * each other.
   */
  public static List<Long> settledWorkingSetsMiB(List<String> podUids) {
    AtomicReference<List<Long>> last = new AtomicReference<>(List.of());
    return await()
        .atMost(Duration.ofMinutes(1))
        .pollInterval(Duration.ofSeconds(2))
        .until(
            () -> {
              List<Long> now = new ArrayList<>();
              for (String uid : podUids) {
                now.add(workingSetBytes(uid) >> 20);
              }
              List<Long> before = last.getAndSet(now);
              return before.size() == now.size()
                      && IntStream.range(0, now.size())
                          .allMatch(i -> Math.abs(now.get(i) - before.get(i)) <= 1)
                  ? now
                  : null;
            },
            ws -> ws != null);
  }

  /** The pod's cgroup directory. */
  public static Path cgroupOf(String podUid) throws IOException {
    try (var dirs =
        Files.find(
            memoryHierarchy(),
            4,
            (p, a) ->
                a.isDirectory()
                    && p.getFileName() != null
                    && p.getFileName().toString().equals("pod" + podUid))) {
      return dirs.findFirst().orElseThrow(() -> new IOException("no cgroup of pod " + podUid));
    }
  }

  /** cgroup v1's memory controller, or the unified v2 hierarchy. */
  private static Path memoryHierarchy() {
    Path v1 = Path.of("/sys/fs/cgroup/memory");
    return Files.isDirectory(v1) ? v1 : Path.of("/sys/fs/cgroup");
  }
}
