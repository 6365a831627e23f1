package dev.idem.core;

import org.jspecify.annotations.Nullable;

/**
 * What a step hands back to {@link Protocol} when the next move is another step's: the steps never
 * call each other, so the order of a message's trip is read in one place.
 */
sealed interface Next permits Next.Settled, Next.Refused, Next.Failed, Next.Doom, Next.Recover {

    /** The message is settled with this outcome. */
    record Settled(Outcome outcome) implements Next {
    }

    /** The system of record refused the effect while the handler ran: the business check's answer. */
    record Refused(DuplicateEffectException refusal) implements Next {
    }

    /** The handler failed (not a crash): the failure's retry, deferral or dead letter follows. */
    record Failed(Throwable failure) implements Next {
    }

    /**
     * The key is for the dead letter, after one last look at the business check (a lost commit reply).
     * A null {@code error} is the cause's description, made only when the letter is.
     */
    record Doom(int attempts, String reason, @Nullable String error, @Nullable Throwable cause) implements Next {
    }

    /** The system of record holds the key dead-lettered, its compensation pending under this fence. */
    record Recover(long fence) implements Next {
    }
}
