// The text Falco appends to every rule output by default (`append_output: [{suggested_output:
// true}]`, falco:userspace/falco/app/actions/init_falco_engine.cpp): each loaded field flagged
// EPF_FORMAT_SUGGESTED, in table order, as ` name_with_underscores=%name`
// (reference/falco-language.md D.2). Only the container plugin suggests fields.
import { fieldTable } from './tables.js';
import type { FieldDef, Source } from './types.js';

/** The suggested fields of a source, in table order. */
function suggestedFields(source: Source): readonly FieldDef[] {
  return fieldTable(source).filter((d) => d.suggested);
}

/** The suggested-output suffix of a source ('' when it suggests nothing), with a leading blank. */
export function suggestedOutput(source: Source): string {
  return suggestedFields(source)
    .map((d) => ` ${d.name.replaceAll('.', '_')}=%${d.name}`)
    .join('');
}

/**
 * The syscall suffix: ` container_id=%container.id container_name=%container.name
 * container_image_repository=%container.image.repository container_image_tag=%container.image.tag
 * k8s_pod_name=%k8s.pod.name k8s_ns_name=%k8s.ns.name`.
 */
export const SYSCALL_SUGGESTED_OUTPUT: string = suggestedOutput('syscall');
