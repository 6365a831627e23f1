package dev.idem.core;

/**
 * Marks a {@link KeySource} whose keys already follow {@link KeyText}'s rule: the processor applies
 * the rule to the keys of any other source, once, so no key is encoded twice.
 */
interface KeyTextSource {

    /** {@code source} itself when its keys follow the rule, else a source that applies it. */
    static <T> KeySource<T> of(KeySource<T> source) {
        if (source instanceof KeyTextSource) {
            return source;
        }
        return (KeySource<T> & KeyTextSource) (envelope, payload) -> KeyText.of(source.keyOf(envelope, payload));
    }
}
