package dev.idem.kafka.internal;

import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RetriableException;

/**
 * The one place where the Kafka adapter classifies what escapes Idem's outcomes: a crash of the
 * process, a failure of one record, or a commit the group will recover from.
 */
public final class KafkaFailures {

    private KafkaFailures() {
    }

    /**
     * Whether the JVM itself is in trouble (out of memory, an internal error): the consumer stops as
     * a crashed process would, without committing. A {@link StackOverflowError} is not one: the
     * stack has unwound by the time it is caught, and a deeply nested payload raises it on every
     * delivery, so it is that record's failure.
     */
    public static boolean isCrash(Throwable failure) {
        return failure instanceof VirtualMachineError && !(failure instanceof StackOverflowError);
    }

    /**
     * Whether a failed commit leaves the consumer able to go on: the group moved on (a rebalance, the
     * member was removed or timed out) or the broker did not answer in time. The records not
     * committed are delivered again, and Idem finds them done or busy.
     */
    public static boolean isRecoverableCommitFailure(Throwable failure) {
        return failure instanceof CommitFailedException
                || failure instanceof RebalanceInProgressException
                || failure instanceof RetriableException;
    }
}
