// Child process of harness.test.ts's signal test: starts a private containerd with a running pod
// container, prints {dir, cgroups} as one JSON line, and waits for the signal that stops it.
import { buildImages, BUSYBOX_IMAGE, startContainerd } from '../../../support/containers/index.js';

const images = buildImages(process.argv[2]!);
const c = await startContainerd(images);
const pod = await c.cri.runPod({ name: 'signal-test', namespace: 'default' });
await c.cri.runContainer(pod, { name: 'sleeper', image: BUSYBOX_IMAGE, command: ['sleep'], args: ['3600'] });
process.stdout.write(`${JSON.stringify({ dir: c.dir, cgroups: c.cgroups })}\n`);
setInterval(() => undefined, 1 << 30);
