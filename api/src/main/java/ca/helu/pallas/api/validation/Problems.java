package ca.helu.pallas.api.validation;

import java.util.ArrayList;
import java.util.List;

/** The problems found in a manifest, each naming its field: {@code spec.agents[1].port: ...}. */
public final class Problems {
  private final List<String> list = new ArrayList<>();

  public void add(String field, String problem) {
    list.add(field + ": " + problem);
  }

  public boolean isEmpty() {
    return list.isEmpty();
  }

  public List<String> list() {
    return List.copyOf(list);
  }
}
