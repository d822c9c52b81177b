// The one Node global the usage file touches (keeps @types/node out of the dependencies).
declare const process: { env: Record<string, string | undefined> };
