/**
 * The Java examples of the README and the guide (docs/guide), cut from here: each block is the region between
 * {@code // tag::name[]} and {@code // end::name[]} that its {@code <!-- snippet: ... -->} marker
 * names, and {@code ReadmeSnippetsTest} fails when the two differ. They compile against Idem's
 * published API as a user's code does; the code outside the regions stands for the user's own.
 */
package example.readme;
