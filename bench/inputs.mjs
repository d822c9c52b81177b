// Inputs more than one benchmark measures, built from the module under test (each
// implementation's own constants), so that the figures of two benchmarks are of the same call.

/** A two-member tmuxdeck team manifest, as an object, from a team-manifest module's constants. */
export function teamManifest (team) {
  return {
    version: team.TMUXDECK_TEAM_MANIFEST_VERSION,
    backend: team.TMUXDECK_TEAM_MANIFEST_BACKEND,
    runId: 'team_3f1c2f3e-8a4b-4c5d-9e6f-7a8b9c0d1e2f',
    leadId: 'tmuxdeck-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
    members: [
      { sessionId: 'tmuxdeck-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', role: 'lead' },
      { sessionId: 'tmuxdeck-1a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', role: 'worker' },
    ],
    createdAt: 1764547200000,
    capabilities: [],
  }
}
