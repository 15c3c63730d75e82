package dev.paddock.store;

import java.util.List;

/**
 * What an append did.
 *
 * @param stored the posted events with their sequence numbers, in order
 * @param dropped how many of the conversation's oldest events retention removed to make room
 */
public record AppendedEvents(List<WebhookEvent> stored, long dropped) {
  public AppendedEvents {
    stored = List.copyOf(stored);
  }
}
