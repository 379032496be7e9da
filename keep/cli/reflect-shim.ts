// @peculiar/x509 registers its ASN.1 handlers through tsyringe, which refuses to load unless a
// Reflect metadata API exists. It only stores and reads metadata, so this WeakMap-backed subset
// (defineMetadata, getOwnMetadata, getMetadata) stands in for the reflect-metadata package.
// Installed only by `keep serve --dev`, before @peculiar/x509 is imported.

type Key = string | symbol | undefined;
const store = new WeakMap<object, Map<Key, Map<unknown, unknown>>>();

function table(target: object, prop: Key, create: boolean): Map<unknown, unknown> | undefined {
  let byProp = store.get(target);
  if (!byProp && create) store.set(target, (byProp = new Map()));
  let entries = byProp?.get(prop);
  if (!entries && create && byProp) byProp.set(prop, (entries = new Map()));
  return entries;
}

export function installReflectMetadata(): void {
  const r = Reflect as unknown as Record<string, unknown>;
  if (typeof r.getMetadata === "function") return;
  const getOwn = (key: unknown, target: object, prop?: Key): unknown => table(target, prop, false)?.get(key);
  r.defineMetadata = (key: unknown, value: unknown, target: object, prop?: Key): void => {
    table(target, prop, true)!.set(key, value);
  };
  r.getOwnMetadata = getOwn;
  r.getMetadata = (key: unknown, target: object, prop?: Key): unknown => {
    for (let t: object | null = target; t; t = Object.getPrototypeOf(t) as object | null) {
      const v = getOwn(key, t, prop);
      if (v !== undefined) return v;
    }
    return undefined;
  };
}
